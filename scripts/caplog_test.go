// Package scripts holds the shell scripts of make run, make bench and CI;
// this test drives caplog.sh, the log rotation of make run, as make run does.
package scripts

import (
	"bufio"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// 20,000 lines through caplog.sh with a 100 kB cap and 2 old files: the
// disk holds at most 3 x 100 kB, the newest lines are in the live file in
// order, the rotated ones hold the lines just before them, none is split.
func TestCapLogRotates(t *testing.T) {
	dir := t.TempDir()
	file := filepath.Join(dir, "api.log")
	if err := os.WriteFile(file, []byte("--- earlier run\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command("./caplog.sh", file, "100000", "2")
	var in strings.Builder
	const lines = 20_000
	for i := 1; i <= lines; i++ {
		fmt.Fprintf(&in, `{"level":"INFO","msg":"request","line":%d,"route":"/v1/initiatives"}`+"\n", i)
	}
	cmd.Stdin = strings.NewReader(in.String())
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("caplog.sh: %v %s", err, out)
	}
	entries, _ := os.ReadDir(dir)
	var names []string
	for _, e := range entries {
		names = append(names, e.Name())
		if fi, _ := e.Info(); fi.Size() > 100_000 {
			t.Errorf("%s: %d bytes, over the cap", e.Name(), fi.Size())
		}
	}
	if strings.Join(names, " ") != "api.log api.log.1 api.log.2" {
		t.Fatalf("files %v, want the live log and 2 rotated ones", names)
	}
	// Read oldest to newest: the lines must be one consecutive run ending at the last.
	next := 0
	for _, name := range []string{"api.log.2", "api.log.1", "api.log"} {
		f, err := os.Open(filepath.Join(dir, name))
		if err != nil {
			t.Fatal(err)
		}
		sc := bufio.NewScanner(f)
		for sc.Scan() {
			var n int
			if _, err := fmt.Sscanf(sc.Text(), `{"level":"INFO","msg":"request","line":%d,`, &n); err != nil {
				t.Fatalf("%s: a broken line %q", name, sc.Text())
			}
			if next != 0 && n != next+1 {
				t.Fatalf("%s: line %d after %d", name, n, next)
			}
			next = n
		}
		f.Close()
	}
	if next != lines {
		t.Fatalf("the last line kept is %d, want %d", next, lines)
	}
}
