#include "textflag.h"

// func bestRowsSSE2(row0, row1, o0, o1, c0, c1 *uint64, h int, r00, r01, r10, r11 uint64)
//
// For q in [0, h): x = c0[q], y = c1[q]; a0, a1 = max(r00, x), max(r01, y); b0, b1 =
// max(r10, x), max(r11, y); for j in {2q, 2q+1}: row0[j] = min(max(a0, o0[j]), max(a1, o1[j]))
// and row1[j] = min(max(b0, o0[j]), max(b1, o1[j])). Ports 2q and 2q+1 share x and y, so each
// step works on the pair (j = 2q, 2q+1) in one register.
TEXT ·bestRowsSSE2(SB), NOSPLIT, $0-88
	MOVQ row0+0(FP), DI
	MOVQ row1+8(FP), SI
	MOVQ o0+16(FP), R8
	MOVQ o1+24(FP), R9
	MOVQ c0+32(FP), R10
	MOVQ c1+40(FP), R11
	MOVQ h+48(FP), CX
	MOVQ r00+56(FP), X8
	PUNPCKLQDQ X8, X8
	MOVQ r01+64(FP), X9
	PUNPCKLQDQ X9, X9
	MOVQ r10+72(FP), X10
	PUNPCKLQDQ X10, X10
	MOVQ r11+80(FP), X11
	PUNPCKLQDQ X11, X11
	XORQ AX, AX
	XORQ BX, BX
	TESTQ CX, CX
	JLE done

loop:
	MOVQ (R10)(AX*8), X0
	PUNPCKLQDQ X0, X0 // (x, x)
	MOVQ (R11)(AX*8), X1
	PUNPCKLQDQ X1, X1 // (y, y)
	MOVAPD X0, X2
	MAXPD X8, X2      // a0
	MOVAPD X1, X3
	MAXPD X9, X3      // a1
	MAXPD X10, X0     // b0
	MAXPD X11, X1     // b1
	MOVUPD (R8)(BX*1), X4 // o0[2q], o0[2q+1]
	MOVUPD (R9)(BX*1), X5 // o1[2q], o1[2q+1]
	MAXPD X4, X2
	MAXPD X5, X3
	MINPD X3, X2
	MOVUPD X2, (DI)(BX*1)
	MAXPD X4, X0
	MAXPD X5, X1
	MINPD X1, X0
	MOVUPD X0, (SI)(BX*1)
	INCQ AX
	ADDQ $16, BX
	CMPQ AX, CX
	JLT loop

done:
	RET
