package schedules

import (
	"reflect"
	"testing"

	"github.com/tetris-hil/tetris-hil/schedules/benes"
)

// The decoder's mirror types have the fields of Schedule and Circuit, in order, with the same
// names, tags and types, but for the circuits and the path; so a field added to one and not the
// other fails here rather than being dropped from files.
func TestScheduleFileMirrorsSchedule(t *testing.T) {
	for _, c := range []struct {
		real, file reflect.Type
		differ     string
		fileType   reflect.Type
	}{
		{reflect.TypeFor[Schedule](), reflect.TypeFor[scheduleFile](), "Circuits", reflect.TypeFor[[]fileCircuit]()},
		{reflect.TypeFor[Circuit](), reflect.TypeFor[fileCircuit](), "Path", reflect.TypeFor[[]benes.Traversal]()},
	} {
		if c.real.NumField() != c.file.NumField() {
			t.Fatalf("%s has %d fields, %s %d", c.real, c.real.NumField(), c.file, c.file.NumField())
		}
		for i := range c.real.NumField() {
			r, f := c.real.Field(i), c.file.Field(i)
			want := r.Type
			if r.Name == c.differ {
				want = c.fileType
			}
			if r.Name != f.Name || r.Tag != f.Tag || f.Type != want {
				t.Errorf("field %d: %s has %s %s %q, %s has %s %s %q", i, c.real, r.Name, r.Type, r.Tag, c.file, f.Name, f.Type, f.Tag)
			}
		}
	}
}
