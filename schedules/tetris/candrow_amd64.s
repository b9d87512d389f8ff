#include "textflag.h"

// func candRowAsm(src *candidate, cnt int, dst *candidate, row *uint64, wRx *float64, items, rxFill *int32,
//	txRow, rxCol *uint64, stride uintptr, uMask uint64, base int, wub uint64, txFill int, alpha, b float64, u int) (k, fill int)
//
// candRowGo's loop. A candidate is {u, v int32; bytes int64; cost float64}, 24 bytes. Registers:
// SI the demand read, DI the candidate written, R8 row, R9 wRx, R10 items, R11 rxFill, R12 u's
// fill position, R13 the number of the next candidate written (base + written), R14 the graph
// word being filled, CX v (SHL takes its count in CL), X0 W_u, X1 α_r, X2 b. The loop's end
// pointer is kept in cnt's slot and the index of the word in R14 in k's, both ints to the
// collector, so that no register is needed for them.
TEXT ·candRowAsm(SB), NOSPLIT, $0-152
	MOVQ src+0(FP), SI
	MOVQ cnt+8(FP), AX
	LEAQ (AX)(AX*2), AX
	SHLQ $3, AX
	ADDQ SI, AX
	MOVQ AX, cnt+8(FP)
	MOVQ dst+16(FP), DI
	MOVQ row+24(FP), R8
	MOVQ wRx+32(FP), R9
	MOVQ items+40(FP), R10
	MOVQ rxFill+48(FP), R11
	MOVQ txFill+104(FP), R12
	MOVQ base+88(FP), R13
	XORQ R14, R14
	MOVQ R14, k+136(FP)
	MOVQ wub+96(FP), X0
	MOVSD alpha+112(FP), X1
	MOVSD b+120(FP), X2

loop:
	CMPQ SI, cnt+8(FP)
	JAE done
	MOVQ 8(SI), DX          // x = bytes
	TESTQ DX, DX
	JZ next
	MOVLQSX 4(SI), CX       // v
	MOVQ DX, 8(DI)          // d.bytes = x (d is at or before the demand, which is read)
	MOVQ u+128(FP), DX
	MOVL DX, 0(DI)          // d.u
	MOVL CX, 4(DI)          // d.v
	MOVSD (R8)(CX*8), X3    // start
	MOVSD (R9)(CX*8), X4    // W_v
	XORL BX, BX
	UCOMISD X0, X4
	SETHI BX                // rx = W_u < W_v (never NaN)
	MOVAPD X0, X5
	MAXSD X4, X5            // key = max(W_u, W_v): W_v on a tie, the same value (never −0)
	SUBSD X1, X3
	ADDSD X5, X3            // cost = start − α_r + key
	MOVSD X3, 16(DI)        // d.cost
	MOVL R13, (R10)(R12*4)  // items[txFill] = id
	INCQ R12
	SUBQ BX, R12            // txFill += 1 ^ rx
	MOVLQSX (R11)(CX*4), DX // f = rxFill[v]
	MOVL R13, (R10)(DX*4)   // items[f] = id
	ADDL BX, DX
	MOVL DX, (R11)(CX*4)    // rxFill[v] = f + rx
	XORL DX, DX
	UCOMISD X3, X2
	SETCC DX                // in = cost ≤ b
	MOVQ CX, AX
	IMULQ stride+72(FP), AX
	ADDQ rxCol+64(FP), AX
	MOVQ DX, BX
	NEGQ BX
	ANDQ uMask+80(FP), BX
	ORQ BX, (AX)            // rxCol[v·words] |= −in & uMask
	MOVQ CX, AX
	SHRQ $6, AX
	CMPQ AX, k+136(FP)
	JEQ same
	MOVQ k+136(FP), BX      // a new word: the one filled so far goes to txRow
	MOVQ AX, k+136(FP)
	SHLQ $3, BX
	ADDQ txRow+56(FP), BX
	ORQ R14, (BX)
	XORQ R14, R14

same:
	SHLQ CL, DX             // in << (v & 63)
	ORQ DX, R14
	ADDQ $24, DI
	INCQ R13

next:
	ADDQ $24, SI
	JMP loop

done:
	MOVQ k+136(FP), BX
	SHLQ $3, BX
	ADDQ txRow+56(FP), BX
	ORQ R14, (BX)
	MOVQ R13, AX
	SUBQ base+88(FP), AX
	MOVQ AX, k+136(FP)
	MOVQ R12, fill+144(FP)
	RET
