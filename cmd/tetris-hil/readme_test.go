package main

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"
)

// readmeBlock is one fenced shell block of the README.
type readmeBlock struct {
	line int    // of the opening fence
	info string // after the backticks: "sh runnable", "sh norun: why"
	body string
}

func readmeBlocks(t *testing.T) []readmeBlock {
	t.Helper()
	b, err := os.ReadFile("../../README.md")
	if err != nil {
		t.Fatal(err)
	}
	var out []readmeBlock
	var cur *readmeBlock
	for i, line := range strings.Split(string(b), "\n") {
		switch {
		case cur == nil && strings.HasPrefix(line, "```"):
			cur = &readmeBlock{line: i + 1, info: strings.TrimSpace(strings.TrimPrefix(line, "```"))}
		case cur != nil && strings.TrimSpace(line) == "```":
			out = append(out, *cur)
			cur = nil
		case cur != nil:
			cur.body += line + "\n"
		}
	}
	if cur != nil {
		t.Fatalf("README.md:%d: unclosed fence", cur.line)
	}
	return out
}

// Every shell block is runnable, or says why not; no text speaks of the sources by file name
// or of issue numbers, which a reader cannot follow.
func TestReadmeBlocksMarked(t *testing.T) {
	for _, b := range readmeBlocks(t) {
		if b.info != "sh" && !strings.HasPrefix(b.info, "sh ") {
			continue
		}
		if b.info != "sh runnable" && !regexp.MustCompile(`^sh norun: \S.{10,}`).MatchString(b.info) {
			t.Errorf("README.md:%d: a shell block must be ```sh runnable or ```sh norun: <reason>, not %q", b.line, b.info)
		}
	}
	text, err := os.ReadFile("../../README.md")
	if err != nil {
		t.Fatal(err)
	}
	if m := regexp.MustCompile(`(?i)\bseeds?/|\bseed 0\d\d|\bissue\s+#?\d+|closing notes? of`).Find(text); m != nil {
		t.Errorf("README.md mentions %q: cite the papers by title and section instead", m)
	}
}

// Every runnable block runs, as written, in a fresh directory against the built binary (with
// the repository's examples/ beside it), each in well under the suite's budget.
func TestReadmeRunnable(t *testing.T) {
	if testing.Short() {
		t.Skip("builds the binary and runs the README's commands")
	}
	bin := filepath.Join(t.TempDir(), "bin")
	build := exec.Command("go", "build", "-o", filepath.Join(bin, "tetris-hil"), ".")
	if out, err := build.CombinedOutput(); err != nil {
		t.Fatalf("go build: %v\n%s", err, out)
	}
	examples, err := filepath.Abs("../../examples")
	if err != nil {
		t.Fatal(err)
	}
	n := 0
	for _, b := range readmeBlocks(t) {
		if b.info != "sh runnable" {
			continue
		}
		n++
		dir := t.TempDir()
		if err := os.Symlink(examples, filepath.Join(dir, "examples")); err != nil {
			t.Fatal(err)
		}
		ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
		cmd := exec.CommandContext(ctx, "bash", "-euo", "pipefail", "-c", b.body)
		cmd.Dir = dir
		cmd.Env = append(os.Environ(), "PATH="+bin+string(os.PathListSeparator)+os.Getenv("PATH"))
		start := time.Now()
		out, err := cmd.CombinedOutput()
		cancel()
		if err != nil {
			t.Errorf("README.md:%d: %v\n%s\n%s", b.line, err, b.body, out)
			continue
		}
		t.Logf("README.md:%d: %v", b.line, time.Since(start))
	}
	if n == 0 {
		t.Error("README.md has no runnable block")
	}
}
