package holo_test

import (
	"os"
	"testing"

	"github.com/tetris-hil/tetris-hil/emulator/holo"
)

func TestMain(m *testing.M) {
	*holo.EmbedSVGFonts = false // golden SVGs hold the layout; TestSVGEmbedsFonts checks the embedding
	os.Exit(m.Run())
}
