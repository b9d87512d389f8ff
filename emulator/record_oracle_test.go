package emulator

import (
	"fmt"

	"github.com/tetris-hil/tetris-hil/internal/safefile"
)

// oracleWrite is RunRecord.Write as it was before it streamed, kept verbatim as the oracle that
// the streamed record's bytes and errors are held to: the whole file marshalled at once.
func (r *RunRecord) oracleWrite(path string) error {
	if err := safefile.WriteJSON(path, r); err != nil {
		return fmt.Errorf("run record: %w", err)
	}
	return nil
}
