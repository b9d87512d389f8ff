package safefile

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
)

func readString(t *testing.T, path string) string {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

func TestRegularFileReplacedAndModeKept(t *testing.T) {
	dir := t.TempDir()
	p := filepath.Join(dir, "out.json")
	if err := os.WriteFile(p, []byte("old"), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.Chmod(p, 0o600); err != nil {
		t.Fatal(err)
	}
	if err := WriteFile(p, []byte("new")); err != nil {
		t.Fatal(err)
	}
	if got := readString(t, p); got != "new" {
		t.Errorf("content %q, want new", got)
	}
	st, _ := os.Stat(p)
	if st.Mode().Perm() != 0o600 {
		t.Errorf("mode %v, want the existing 0600 kept", st.Mode().Perm())
	}
	entries, _ := os.ReadDir(dir)
	if len(entries) != 1 {
		t.Errorf("directory holds %d entries, want only the output (no temporary left)", len(entries))
	}
}

func TestNewFileFollowsUmask(t *testing.T) {
	old := syscall.Umask(0o077)
	defer syscall.Umask(old)
	p := filepath.Join(t.TempDir(), "new.csv")
	if err := WriteFile(p, []byte("x")); err != nil {
		t.Fatal(err)
	}
	st, _ := os.Stat(p)
	if st.Mode().Perm() != 0o600 {
		t.Errorf("mode %v under umask 077, want 0600", st.Mode().Perm())
	}
	syscall.Umask(0o022)
	p2 := filepath.Join(t.TempDir(), "new2.csv")
	if err := WriteFile(p2, []byte("x")); err != nil {
		t.Fatal(err)
	}
	st, _ = os.Stat(p2)
	if st.Mode().Perm() != 0o644 {
		t.Errorf("mode %v under umask 022, want 0644", st.Mode().Perm())
	}
}

func TestSymlinkKeptTargetReplaced(t *testing.T) {
	dir := t.TempDir()
	sub := filepath.Join(dir, "real")
	if err := os.Mkdir(sub, 0o755); err != nil {
		t.Fatal(err)
	}
	target := filepath.Join(sub, "target.json")
	if err := os.WriteFile(target, []byte("old"), 0o644); err != nil {
		t.Fatal(err)
	}
	link := filepath.Join(dir, "link.json")
	if err := os.Symlink("real/target.json", link); err != nil {
		t.Fatal(err)
	}
	if err := WriteFile(link, []byte("new")); err != nil {
		t.Fatal(err)
	}
	st, err := os.Lstat(link)
	if err != nil || st.Mode()&os.ModeSymlink == 0 {
		t.Fatalf("link.json is no longer a symbolic link (mode %v, err %v)", st.Mode(), err)
	}
	if got := readString(t, target); got != "new" {
		t.Errorf("target holds %q, want new", got)
	}
	// A dangling link creates its target.
	dangling := filepath.Join(dir, "dangling.json")
	if err := os.Symlink("real/created.json", dangling); err != nil {
		t.Fatal(err)
	}
	if err := WriteFile(dangling, []byte("c")); err != nil {
		t.Fatal(err)
	}
	if got := readString(t, filepath.Join(sub, "created.json")); got != "c" {
		t.Errorf("dangling link target holds %q", got)
	}
}

func TestFIFOWrittenInto(t *testing.T) {
	p := filepath.Join(t.TempDir(), "pipe")
	if err := syscall.Mkfifo(p, 0o644); err != nil {
		t.Skipf("mkfifo: %v", err)
	}
	got := make(chan string, 1)
	go func() {
		f, err := os.Open(p)
		if err != nil {
			got <- "open: " + err.Error()
			return
		}
		defer f.Close()
		b := make([]byte, 64)
		n, _ := f.Read(b)
		got <- string(b[:n])
	}()
	if err := WriteFile(p, []byte("through the pipe")); err != nil {
		t.Fatal(err)
	}
	if s := <-got; s != "through the pipe" {
		t.Errorf("reader got %q", s)
	}
	st, _ := os.Lstat(p)
	if st.Mode()&os.ModeNamedPipe == 0 {
		t.Errorf("the FIFO was replaced: mode %v", st.Mode())
	}
}

func TestDeviceWrittenIntoNotReplaced(t *testing.T) {
	// /dev/null exists everywhere; a device node made with mknod (root only) checks the same rule
	// on a path we own.
	if err := WriteFile("/dev/null", []byte("discard")); err != nil {
		t.Fatalf("writing /dev/null: %v", err)
	}
	if os.Geteuid() != 0 {
		t.Log("not root: skipping the mknod device; /dev/null was checked")
		return
	}
	p := filepath.Join(t.TempDir(), "null")
	// Major 1, minor 3 is the null device on Linux.
	if err := syscall.Mknod(p, syscall.S_IFCHR|0o666, 1<<8|3); err != nil {
		t.Skipf("mknod: %v", err)
	}
	if err := WriteFile(p, []byte("x")); err != nil {
		t.Fatal(err)
	}
	st, _ := os.Lstat(p)
	if st.Mode()&os.ModeCharDevice == 0 {
		t.Errorf("the device node was replaced: mode %v", st.Mode())
	}
}

func TestDirectoryRefused(t *testing.T) {
	dir := t.TempDir()
	if err := WriteFile(dir, []byte("x")); err == nil || !strings.Contains(err.Error(), "is a directory") {
		t.Errorf("WriteFile(dir) = %v, want a directory error", err)
	}
	if err := Check(dir); err == nil || !strings.Contains(err.Error(), "is a directory") {
		t.Errorf("Check(dir) = %v, want a directory error", err)
	}
}

func TestCheck(t *testing.T) {
	dir := t.TempDir()
	missing := filepath.Join(dir, "nope", "out.json")
	err := Check(missing)
	if err == nil || !strings.Contains(err.Error(), filepath.Join(dir, "nope")) || !strings.Contains(err.Error(), "does not exist") {
		t.Errorf("Check(missing dir) = %v, want an error naming the directory", err)
	}
	if err := Check(filepath.Join(dir, "fine.json")); err != nil {
		t.Errorf("Check(new file in existing dir) = %v", err)
	}
	if err := Check("/dev/null"); err != nil {
		t.Errorf("Check(/dev/null) = %v", err)
	}
	file := filepath.Join(dir, "f")
	os.WriteFile(file, nil, 0o644)
	if err := Check(filepath.Join(file, "x.json")); err == nil || !strings.Contains(err.Error(), "not a directory") {
		t.Errorf("Check(under a file) = %v", err)
	}
}

// TestUnprivileged runs the file tests again as an unprivileged user when the test runs as root
// and can switch (the nobody account, through the test binary itself).
func TestUnprivileged(t *testing.T) {
	if os.Getenv("SAFEFILE_UNPRIVILEGED") == "1" {
		if os.Geteuid() == 0 {
			t.Fatal("still root")
		}
		return
	}
	if os.Geteuid() != 0 {
		t.Skip("already unprivileged: the other tests ran as this user")
	}
	exe, err := os.Executable()
	if err != nil {
		t.Skip(err)
	}
	// t.TempDir's parent is private to root, so the unprivileged run gets its own world-writable one.
	dir, err := os.MkdirTemp("", "safefile-unprivileged")
	if err != nil {
		t.Fatal(err)
	}
	defer os.RemoveAll(dir)
	if err := os.Chmod(dir, 0o777); err != nil {
		t.Fatal(err)
	}
	// Copy the test binary where nobody can execute it.
	bin := filepath.Join(dir, "safefile.test")
	b, err := os.ReadFile(exe)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(bin, b, 0o755); err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(bin, "-test.run", "^(TestRegularFileReplacedAndModeKept|TestNewFileFollowsUmask|TestSymlinkKeptTargetReplaced|TestFIFOWrittenInto|TestDeviceWrittenIntoNotReplaced|TestDirectoryRefused|TestCheck|TestWriteStream|TestWriteStreamDevices|TestWriteStreamFailureKeepsTarget|TestUnprivileged)$", "-test.v")
	cmd.Env = append(os.Environ(), "SAFEFILE_UNPRIVILEGED=1", "TMPDIR="+dir)
	cmd.SysProcAttr = &syscall.SysProcAttr{Credential: &syscall.Credential{Uid: 65534, Gid: 65534}}
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("as uid 65534: %v\n%s", err, out)
	}
	if !strings.Contains(string(out), "PASS") {
		t.Fatalf("as uid 65534, no PASS:\n%s", out)
	}
	t.Logf("as uid 65534:\n%s", out)
}
