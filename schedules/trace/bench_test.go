package trace

import (
	"bytes"
	"testing"
)

// Reading the built-in trace (30 matrices of 8×8) is what every command without --demand does.
func BenchmarkReadDefault(b *testing.B) {
	for b.Loop() {
		if _, err := Read(bytes.NewReader(defaultTrace), "default", 0); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkReadNPY256(b *testing.B) {
	m := newSquare(256)
	for i := range m {
		for j := range m[i] {
			m[i][j] = int64(i*256 + j)
		}
	}
	var buf bytes.Buffer
	WriteNPY(&buf, [][][]int64{m})
	data := buf.Bytes()
	b.SetBytes(int64(len(data)))
	for b.Loop() {
		if _, err := ReadNPY(bytes.NewReader(data), "b.npy", 0); err != nil {
			b.Fatal(err)
		}
	}
}
