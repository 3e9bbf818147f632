package store

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
)

// gate is a GroupCommit write function that records each batch and blocks
// until the test releases it; request "bad-*" fails.
type gate struct {
	mu      sync.Mutex
	batches [][]string
	started chan struct{}
	release chan struct{}
}

func newGate() *gate {
	return &gate{started: make(chan struct{}, 16), release: make(chan struct{}, 16)}
}

func (g *gate) write(_ context.Context, batch []string) []error {
	g.mu.Lock()
	g.batches = append(g.batches, append([]string(nil), batch...))
	g.mu.Unlock()
	g.started <- struct{}{}
	<-g.release
	errs := make([]error, len(batch))
	for i, r := range batch {
		if strings.HasPrefix(r, "bad") {
			errs[i] = errors.New("refused " + r)
		}
	}
	return errs
}

// queued waits until n requests are queued behind the batches in flight.
func queued[R any](t *testing.T, g *GroupCommit[R], n int) {
	t.Helper()
	deadline := time.Now().Add(30 * time.Second)
	for {
		g.mu.Lock()
		got := len(g.queue)
		g.mu.Unlock()
		if got == n {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("%d requests queued, want %d", got, n)
		}
		time.Sleep(time.Millisecond) // polling a condition, not timing
	}
}

// TestGroupCommitBatchesWhatQueuesBehindAFlight: a lone request is written
// alone at once; requests arriving while flights batches are in flight are
// written together as the next batch, each getting its own outcome.
func TestGroupCommitBatchesWhatQueuesBehindAFlight(t *testing.T) {
	for _, flights := range []int{1, 2} {
		t.Run(fmt.Sprintf("%d flights", flights), func(t *testing.T) {
			gt := newGate()
			g := NewGroupCommit(3, flights, gt.write)
			ctx := context.Background()
			results := sync.Map{}
			var wg sync.WaitGroup
			do := func(r string) {
				wg.Add(1)
				go func() {
					defer wg.Done()
					results.Store(r, g.Do(ctx, r))
				}()
			}
			// Fill every flight with a lone request.
			for i := 0; i < flights; i++ {
				do(fmt.Sprintf("lone%d", i))
				<-gt.started
			}
			// Four more queue; the batch bound is 3.
			for _, r := range []string{"q1", "bad-q2", "q3", "q4"} {
				do(r)
				queued(t, g, map[string]int{"q1": 1, "bad-q2": 2, "q3": 3, "q4": 4}[r])
			}
			gt.release <- struct{}{} // the first flight ends; q1 leads q1, bad-q2, q3
			<-gt.started
			for i := 1; i < flights; i++ {
				gt.release <- struct{}{}
			}
			gt.release <- struct{}{}
			if flights == 1 {
				<-gt.started // q4 leads the last batch
			} else {
				<-gt.started // the second flight's end handed q4 the lead
			}
			gt.release <- struct{}{}
			wg.Wait()

			var want [][]string
			for i := 0; i < flights; i++ {
				want = append(want, []string{fmt.Sprintf("lone%d", i)})
			}
			want = append(want, []string{"q1", "bad-q2", "q3"}, []string{"q4"})
			if diff := cmp.Diff(want, gt.batches); diff != "" {
				t.Errorf("batches (-want +got):\n%s", diff)
			}
			results.Range(func(k, v any) bool {
				err, _ := v.(error)
				if bad := strings.HasPrefix(k.(string), "bad"); bad != (err != nil) {
					t.Errorf("request %s got %v", k, err)
				}
				return true
			})
			g.mu.Lock()
			defer g.mu.Unlock()
			if g.leaders != 0 || len(g.queue) != 0 {
				t.Errorf("after all: %d leaders, %d queued; want none", g.leaders, len(g.queue))
			}
		})
	}
}
