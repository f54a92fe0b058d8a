package testenv

import (
	"os"
	"strings"
	"testing"
)

// The tests' dev server runs with the settings of make run and make bench: scripts/lib.sh's
// VC_TEMPORAL_DEV_FLAGS holds the same flags in the same order.
func TestDevServerFlagsMatchScripts(t *testing.T) {
	b, err := os.ReadFile("../../scripts/lib.sh")
	if err != nil {
		t.Fatal(err)
	}
	_, rest, ok := strings.Cut(string(b), "\nVC_TEMPORAL_DEV_FLAGS=(")
	if !ok {
		t.Fatal("scripts/lib.sh has no VC_TEMPORAL_DEV_FLAGS=( ... )")
	}
	body, _, _ := strings.Cut(rest, ")")
	if got := strings.Fields(body); strings.Join(got, " ") != strings.Join(DevServerFlags, " ") {
		t.Errorf("scripts/lib.sh VC_TEMPORAL_DEV_FLAGS = %q\ninternal/testenv DevServerFlags = %q", got, DevServerFlags)
	}
}
