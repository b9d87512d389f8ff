package outdir

import (
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"sort"
	"strings"
	"testing"
)

func TestClean(t *testing.T) {
	root := t.TempDir()
	dir := filepath.Join(root, "out")
	if err := os.Mkdir(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	for _, n := range []string{"old.svg", "kept.csv", "input.json", "mine.txt"} {
		if err := os.WriteFile(filepath.Join(dir, n), []byte(n), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	outside := filepath.Join(root, "outside.txt")
	if err := os.WriteFile(outside, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.Mkdir(filepath.Join(dir, "sub.svg"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(outside, filepath.Join(dir, "link.svg")); err != nil {
		t.Fatal(err)
	}
	owned := []string{"old.svg", "kept.csv", "input.json", "absent.png", "../outside.txt", "sub/x", ".", "..",
		"sub.svg", "link.svg", "old.svg"}
	removed, err := Clean(dir, owned, []string{"kept.csv"}, []string{filepath.Join(dir, "input.json")})
	if err != nil {
		t.Fatal(err)
	}
	if want := []string{filepath.Join(dir, "old.svg")}; !reflect.DeepEqual(removed, want) {
		t.Errorf("removed %v, want %v", removed, want)
	}
	left, err := Names(dir, func(string) bool { return true })
	if err != nil {
		t.Fatal(err)
	}
	sort.Strings(left)
	if want := []string{"input.json", "kept.csv", "link.svg", "mine.txt", "sub.svg"}; !reflect.DeepEqual(left, want) {
		t.Errorf("left %v, want %v", left, want)
	}
	if _, err := os.Stat(outside); err != nil {
		t.Errorf("a name with .. reached outside the directory: %v", err)
	}
	if ns, err := Names(filepath.Join(root, "missing"), func(string) bool { return true }); err != nil || ns != nil {
		t.Errorf("missing dir: %v, %v", ns, err)
	}
}

func TestPlainName(t *testing.T) {
	for _, c := range []struct {
		n    string
		want bool
	}{{"a.svg", true}, {"", false}, {".", false}, {"..", false}, {"a/b", false}, {"/a", false}, {"..a", true}} {
		if got := PlainName(c.n); got != c.want {
			t.Errorf("PlainName(%q) = %v, want %v", c.n, got, c.want)
		}
	}
}

func ExampleClean() {
	dir, _ := os.MkdirTemp("", "outdir")
	defer os.RemoveAll(dir)
	for _, n := range []string{"speedup-bvn.svg", "speedup-sunflow.svg", "notes.txt"} {
		os.WriteFile(filepath.Join(dir, n), nil, 0o644)
	}
	// The previous run wrote both plots; this one writes only bvn's. notes.txt is not owned.
	removed, err := Clean(dir, []string{"speedup-bvn.svg", "speedup-sunflow.svg"}, []string{"speedup-bvn.svg"}, nil)
	fmt.Println(len(removed), filepath.Base(removed[0]), err)
	// Output: 1 speedup-sunflow.svg <nil>
}

func TestMakeCreatesParentsAndRefusesFiles(t *testing.T) {
	root := t.TempDir()
	file := filepath.Join(root, "results.csv")
	if err := os.WriteFile(file, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		dir     string
		made    int
		wantErr string
	}{
		{filepath.Join(root, "runs", "r1") + "/", 2, ""},
		{filepath.Join(root, "runs", "r2"), 1, ""},
		{filepath.Join(root, "runs"), 0, ""},
		{filepath.Join(file, "r1"), 0, "results.csv is a file, not a directory"},
		{file, 0, "is not a directory"},
		{"", 0, "empty"},
	} {
		if err := Check(c.dir); (err != nil) != (c.wantErr != "") {
			t.Errorf("Check(%q) = %v", c.dir, err)
		}
		made, err := Make(c.dir)
		if c.wantErr != "" {
			if err == nil || !strings.Contains(err.Error(), c.wantErr) {
				t.Errorf("Make(%q) = %v, want error with %q", c.dir, err, c.wantErr)
			}
			continue
		}
		if err != nil || len(made) != c.made {
			t.Errorf("Make(%q) = %v, %v; want %d created", c.dir, made, err, c.made)
		}
		if st, err := os.Stat(c.dir); err != nil || !st.IsDir() {
			t.Errorf("%s not a directory after Make: %v", c.dir, err)
		}
	}
}
