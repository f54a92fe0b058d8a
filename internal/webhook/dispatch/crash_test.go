package dispatch_test

import (
	"bytes"
	"context"
	"encoding/base64"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"

	"github.com/valuecase/valuecase/db"
	"github.com/valuecase/valuecase/db/dbtest"
	"github.com/valuecase/valuecase/internal/outbox"
	"github.com/valuecase/valuecase/internal/secretbox"
	"github.com/valuecase/valuecase/internal/testenv"
	"github.com/valuecase/valuecase/internal/webhook/dispatch"
)

// TestCrashSafetyKilledProcesses kills real processes between commit and
// delivery (kill -9: no cleanup, no graceful shutdown) and checks that every
// event still reaches every subscription, with the same event id, and that a
// receiver deduplicating on that id sees each event exactly once:
//
//  1. event 1 commits while no worker runs;
//  2. worker 1 starts, delivers event 1 to B, and is killed while its request
//     to A is in flight (A has received it, the answer never arrives);
//  3. event 2 is committed through a real API process, which is then killed;
//  4. worker 2 starts (the dead worker's leases run out) and finishes both.
func TestCrashSafetyKilledProcesses(t *testing.T) {
	if testing.Short() {
		t.Skip("builds and runs the binary")
	}
	ctx := context.Background()
	bin := buildBinary(t)
	dbURL := dbtest.URL(t)
	pool, err := db.NewPool(ctx, dbURL)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(pool.Close)
	key := base64.StdEncoding.EncodeToString(bytes.Repeat([]byte{42}, 32))
	box, _ := secretbox.New(key)
	f := &fixture{t: t, pool: pool, tenant: dbtest.NewTenant(t, pool, "enterprise"), d: &dispatch.Dispatcher{Pool: pool, Secrets: box, Log: quiet}}

	release := make(chan struct{})
	a := newReceiver(t, 200)
	var hangOnce sync.Once
	a.SetHandler(func(w http.ResponseWriter, r *http.Request) bool {
		hung := false
		hangOnce.Do(func() { hung = true })
		if hung {
			<-release // the worker is killed while this request is in flight
		}
		return false
	})
	b := newReceiver(t, 200)
	hookA := f.webhook(a.URL, true, outbox.InitiativeCreated)
	hookB := f.webhook(b.URL, true, outbox.InitiativeCreated)

	env := append(os.Environ(),
		"DATABASE_URL="+dbURL,
		"TEMPORAL_ADDRESS="+testenv.TemporalAddress(t),
		"OUTBOUND_ALLOW_PRIVATE_NETWORKS=true",
		"SECRETS_KEY="+key,
		"AUTH_SIGNING_KEYS_DIR="+t.TempDir(),
		"LOG_LEVEL=error",
	)

	// 1. Committed while nothing delivers.
	ev1 := f.event(outbox.InitiativeCreated, map[string]string{"name": "first"})

	// 2. Worker 1 takes it and dies mid-delivery.
	w1 := startProcess(t, bin, append(env, "WORKER_HTTP_ADDR="+freeAddr(t)), "worker")
	testenv.Eventually(t, 60*time.Second, "B to get event 1", func() bool { return f.status(hookB, ev1.ID) == dispatch.StatusDelivered })
	testenv.Eventually(t, 10*time.Second, "A to receive event 1", func() bool { return len(a.Requests()) == 1 })
	kill(t, w1)
	close(release)

	// 3. Event 2 through the real API, which is killed right after answering.
	apiAddr := freeAddr(t)
	apiEnv := append(env, "HTTP_ADDR="+apiAddr)
	api := startProcess(t, bin, apiEnv, "api")
	token := strings.TrimSpace(runOutput(t, bin, apiEnv, "token", "--tenant", f.tenant.String()))
	testenv.Eventually(t, 30*time.Second, "the API", func() bool {
		res, err := http.Get("http://" + apiAddr + "/health")
		if err == nil {
			res.Body.Close()
		}
		return err == nil && res.StatusCode == 200
	})
	req, _ := http.NewRequest("POST", "http://"+apiAddr+"/v1/initiatives", strings.NewReader(`{"name":"second"}`))
	req.Header.Set("Authorization", "Bearer "+token)
	req.Header.Set("X-Tenant-ID", f.tenant.String())
	req.Header.Set("Content-Type", "application/json")
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	body, _ := io.ReadAll(res.Body)
	res.Body.Close()
	if res.StatusCode != 201 {
		t.Fatalf("create through the API: %d %s", res.StatusCode, body)
	}
	kill(t, api)

	// The dead worker's leases would run out after a minute; move time on instead of waiting.
	f.inTenant(func(tx pgx.Tx) error {
		if _, err := tx.Exec(ctx, "UPDATE outbox_events SET locked_until = now() - interval '1 second' WHERE locked_until IS NOT NULL"); err != nil {
			return err
		}
		_, err := tx.Exec(ctx, "UPDATE webhook_deliveries SET locked_until = now() - interval '1 second' WHERE status = 'pending'")
		return err
	})

	// 4. Worker 2 finishes the work.
	w2 := startProcess(t, bin, append(env, "WORKER_HTTP_ADDR="+freeAddr(t)), "worker")
	defer kill(t, w2)
	var events []outbox.Event
	f.inTenant(func(tx pgx.Tx) error {
		rows, err := tx.Query(ctx, "SELECT id, type FROM outbox_events ORDER BY seq")
		if err != nil {
			return err
		}
		defer rows.Close()
		for rows.Next() {
			var ev outbox.Event
			if err := rows.Scan(&ev.ID, &ev.Type); err != nil {
				return err
			}
			events = append(events, ev)
		}
		return rows.Err()
	})
	if len(events) != 2 {
		t.Fatalf("outbox holds %d events", len(events))
	}
	for _, ev := range events {
		for name, h := range map[string]uuid.UUID{"A": hookA, "B": hookB} {
			testenv.Eventually(t, 60*time.Second, fmt.Sprintf("%s to get %s", name, ev.ID), func() bool {
				return f.status(h, ev.ID) == dispatch.StatusDelivered
			})
		}
		testenv.Eventually(t, 30*time.Second, "the event to be published", func() bool { return published(f, ev.ID) })
	}

	// What the receivers saw.
	for name, rc := range map[string]*testenv.Receiver{"A": a, "B": b} {
		got := rc.Requests()
		if rc.SignatureErrors() != 0 {
			t.Errorf("%s: bad signatures", name)
		}
		byID := map[string][][]byte{}
		for _, g := range got {
			byID[g.EventID] = append(byID[g.EventID], g.Body)
		}
		if len(byID) != 2 {
			t.Errorf("%s saw %d distinct events, want 2", name, len(byID))
		}
		for id, bodies := range byID {
			for _, b := range bodies[1:] {
				if !bytes.Equal(b, bodies[0]) {
					t.Errorf("%s: event %s arrived with different bodies", name, id)
				}
			}
		}
		t.Logf("receiver %s: %d requests, %d distinct event ids", name, len(got), len(byID))
	}
	if n := len(b.Requests()); n != 2 {
		t.Errorf("B, which answered before the kill, got %d requests; want exactly 2", n)
	}
	if n := len(a.Requests()); n != 3 {
		t.Errorf("A got %d requests; want 3 (event 1 twice: the one cut by the kill and its repeat)", n)
	}
	if n := f.deliveryCount(); n != 4 {
		t.Errorf("%d delivery rows, want one per event per subscription (4)", n)
	}
}

// buildBinary builds bin/valuecase for this test into a temporary directory.
func buildBinary(t *testing.T) string {
	t.Helper()
	out := filepath.Join(t.TempDir(), "valuecase")
	cmd := exec.Command("go", "build", "-o", out, "github.com/valuecase/valuecase/cmd/valuecase")
	if b, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("go build: %v\n%s", err, b)
	}
	return out
}

func startProcess(t *testing.T, bin string, env []string, args ...string) *exec.Cmd {
	t.Helper()
	cmd := exec.Command(bin, args...)
	cmd.Env = env
	cmd.Stdout, cmd.Stderr = os.Stderr, os.Stderr
	cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	return cmd
}

func kill(t *testing.T, cmd *exec.Cmd) {
	t.Helper()
	if cmd.ProcessState != nil {
		return
	}
	_ = cmd.Process.Signal(syscall.SIGKILL)
	_ = cmd.Wait()
}

func runOutput(t *testing.T, bin string, env []string, args ...string) string {
	t.Helper()
	cmd := exec.Command(bin, args...)
	cmd.Env = env
	b, err := cmd.Output()
	if err != nil {
		t.Fatalf("%s %v: %v", bin, args, err)
	}
	return string(b)
}

func freeAddr(t *testing.T) string {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	return l.Addr().String()
}
