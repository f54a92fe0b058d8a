package auth

import (
	"path/filepath"
	"sync"
	"testing"
)

// The API, a worker and the token command often start together on an empty
// key directory (make run, the crash tests): they must end up with one key,
// so that a token one of them signs verifies in the others.
func TestLoadKeyStoreConcurrentStartsAgreeOnOneKey(t *testing.T) {
	for round := 0; round < 20; round++ {
		dir := t.TempDir()
		const n = 8
		stores := make([]*KeyStore, n)
		errs := make([]error, n)
		var start, done sync.WaitGroup
		start.Add(1)
		for i := 0; i < n; i++ {
			done.Add(1)
			go func() {
				defer done.Done()
				start.Wait()
				stores[i], errs[i] = LoadKeyStore(dir)
			}()
		}
		start.Done()
		done.Wait()
		files, _ := filepath.Glob(filepath.Join(dir, "*.pem"))
		if len(files) != 1 {
			t.Fatalf("round %d: %d key files, want 1: %v", round, len(files), files)
		}
		for i := 0; i < n; i++ {
			if errs[i] != nil {
				t.Fatalf("round %d: process %d: %v", round, i, errs[i])
			}
			if keys := stores[i].Keys(); len(keys) != 1 || keys[0].KID != stores[0].Keys()[0].KID {
				t.Fatalf("round %d: process %d loaded %v, process 0 %v", round, i, keys, stores[0].Keys())
			}
		}
	}
}

// A reader of the directory (a reload, another process starting) while a key
// is being written sees all of it or none: never a torn file.
func TestReadKeysNeverSeesAHalfWrittenKey(t *testing.T) {
	dir := t.TempDir()
	if _, err := GenerateKey(dir); err != nil {
		t.Fatal(err)
	}
	stop := make(chan struct{})
	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		for i := 0; i < 200; i++ {
			if _, err := GenerateKey(dir); err != nil {
				t.Error(err)
				break
			}
		}
		close(stop)
	}()
	reads := 0
	for {
		select {
		case <-stop:
			wg.Wait()
			if reads == 0 {
				t.Fatal("no read overlapped the writes")
			}
			return
		default:
		}
		if _, err := readKeys(dir); err != nil {
			t.Fatalf("read %d: %v", reads, err)
		}
		reads++
	}
}
