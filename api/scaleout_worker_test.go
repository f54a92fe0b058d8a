package api_test

import (
	"encoding/json"
	"fmt"
	"net/http"
	"sync"
	"testing"
	"time"

	"github.com/valuecase/valuecase/internal/testenv"
	"github.com/valuecase/valuecase/internal/webhook/dispatch"
	"github.com/valuecase/valuecase/worker"
)

// Two worker processes (two worker.Run, each with its own relay, dispatcher
// and Temporal workers) on one database and one Temporal dev server deliver
// each webhook event exactly once, signed; when one of them dies halfway
// through a second burst, the other delivers everything it left: none lost.
func TestScaleOutTwoWorkersDeliverEachEventOnce(t *testing.T) {
	if testing.Short() {
		t.Skip("starts two workers on the Temporal dev server")
	}
	ts := newTestServer(t, "enterprise_plus", allowPrivate) // negotiated limits: 400 creates in a burst are fine
	admin := ts.admin()
	rc := newHookReceiver(t, 200)
	rc.SetHandler(func(http.ResponseWriter, *http.Request) bool {
		time.Sleep(5 * time.Millisecond) // a receiver that takes a moment: deliveries are in flight when a worker dies
		return false
	})
	ts.createWebhook(admin, rc.URL, "initiative.created")

	cfg := testConfig(t)
	cfg.OutboundAllowPrivateNetworks = true
	cfg.WebhookRetryDelays = []time.Duration{time.Second, 2 * time.Second}
	tc := testenv.TemporalClient(t)
	// A dead worker's claims run out after lease: short here, so the test
	// does not wait the production minute.
	const lease = 3 * time.Second
	start := func() (stop func()) {
		d, err := dispatch.New(cfg, ts.pool, testenv.QuietLogger())
		if err != nil {
			t.Fatal(err)
		}
		d.ClaimLease = lease
		return runWorker(t, &worker.Worker{Config: cfg, Pool: ts.pool, Temporal: tc, Log: testenv.QuietLogger(), Webhooks: d, OutboxLease: lease})
	}
	emit := func(prefix string, n int) map[string]bool {
		t.Helper()
		ids := make(chan string, n)
		var wg sync.WaitGroup
		for g := range 8 { // eight clients at once, as a busy tenant would
			wg.Go(func() {
				for i := g; i < n; i += 8 {
					r := ts.do(&admin, "POST", "/v1/initiatives", map[string]any{"name": fmt.Sprintf("%s %d", prefix, i)})
					if r.status != 201 {
						t.Errorf("create %d: %d %s", i, r.status, r.body)
						return
					}
					ids <- r.json(t)["id"].(string)
				}
			})
		}
		wg.Wait()
		close(ids)
		want := map[string]bool{}
		for id := range ids {
			want[id] = true
		}
		return want
	}
	// seen counts deliveries per initiative id among the requests from index `from` on.
	seen := func(from int) (map[string]int, []testenv.Received) {
		all := rc.OfType("initiative.created")
		out := map[string]int{}
		for _, r := range all[min(from, len(all)):] {
			var env struct {
				Data struct {
					ID string `json:"id"`
				} `json:"data"`
			}
			if err := json.Unmarshal(r.Body, &env); err != nil {
				t.Fatalf("envelope: %v", err)
			}
			out[env.Data.ID]++
		}
		return out, all
	}

	killA := start()
	start()
	const n = 200
	want := emit("Burst", n)
	testenv.Eventually(t, 90*time.Second, fmt.Sprintf("%d deliveries", n), func() bool { got, _ := seen(0); return len(got) >= n })
	time.Sleep(2 * lease) // anything delivered twice would have come by now
	got, all := seen(0)
	for id := range want {
		if got[id] != 1 {
			t.Errorf("initiative %s: delivered %d times, want exactly once", id, got[id])
		}
	}
	if len(all) != n || len(got) != n {
		t.Errorf("%d requests for %d distinct events, want %d and %d", len(all), len(got), n, n)
	}
	if e := rc.SignatureErrors(); e != 0 {
		t.Errorf("%d deliveries with a bad signature", e)
	}

	// Second burst: worker A dies once half of it has arrived.
	before := len(all)
	var wg sync.WaitGroup
	wg.Go(func() {
		for deadline := time.Now().Add(90 * time.Second); time.Now().Before(deadline); time.Sleep(10 * time.Millisecond) {
			if got, _ := seen(before); len(got) >= n/2 {
				break
			}
		}
		killA()
	})
	want = emit("After the kill", n)
	wg.Wait()
	testenv.Eventually(t, 120*time.Second, "every event of the second burst", func() bool {
		got, _ := seen(before)
		for id := range want {
			if got[id] == 0 {
				return false
			}
		}
		return true
	})
	got, all = seen(before)
	dups := 0
	for _, c := range got {
		dups += c - 1
	}
	// At-least-once: only an attempt in flight when A died may come twice
	// (the receiver answered, A never recorded it); its relay holds at most 64.
	if dups > 64 {
		t.Errorf("%d duplicate deliveries after the kill, more than the 64 a relay can have in flight", dups)
	}
	t.Logf("second burst: %d events, %d requests, %d duplicates of attempts in flight when worker A died", len(want), len(all)-before, dups)
	if e := rc.SignatureErrors(); e != 0 {
		t.Errorf("%d deliveries with a bad signature", e)
	}
}
