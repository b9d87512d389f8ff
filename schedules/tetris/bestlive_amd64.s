#include "textflag.h"

// func bestLiveAsm(cands *candidate, list *int32, cnt int, h float64, used *bool, field uintptr) int32
//
// For each i of list: c = cands[i] (24 bytes: u, v int32; bytes int64; cost float64); it becomes
// the best (AX, with its bytes in DX) when c.cost ≤ h, c.bytes is more than the best's and the
// partner's port (the int32 at byte offset field of c) is not used.
TEXT ·bestLiveAsm(SB), NOSPLIT, $0-52
	MOVQ cands+0(FP), R8
	MOVQ list+8(FP), SI
	MOVQ cnt+16(FP), CX
	MOVSD h+24(FP), X0
	MOVQ used+32(FP), R9
	MOVQ field+40(FP), R10
	MOVQ $-1, AX
	MOVQ $0x8000000000000000, DX

loop:
	TESTQ CX, CX
	JZ done
	MOVLQSX (SI), BX          // i
	LEAQ (BX)(BX*2), R11
	SHLQ $3, R11
	ADDQ R8, R11              // &cands[i]
	MOVSD 16(R11), X1         // cost
	MOVQ 8(R11), R12          // bytes
	MOVLQSX (R11)(R10*1), R13 // the partner's port
	MOVBLZX (R9)(R13*1), R13  // used
	XORL R14, R14
	UCOMISD X1, X0
	SETCC R14                 // cost ≤ h (false on NaN, as in Go)
	XORL DI, DI
	CMPQ R12, DX
	SETGT DI                  // bytes > best's
	ANDL R14, DI
	XORL $1, R13
	ANDL R13, DI              // and the partner is free
	TESTL DI, DI
	CMOVQNE BX, AX
	CMOVQNE R12, DX
	ADDQ $4, SI
	DECQ CX
	JMP loop

done:
	MOVL AX, ret+48(FP)
	RET
