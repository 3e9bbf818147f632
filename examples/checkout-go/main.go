// Command checkout-go runs the spec's checkout saga (reserve -> charge ->
// await payment.settled -> finalise) with the durable engine's Go API on the
// embedded SQLite default, a fresh file under .skydata/ each run. The first
// worker "crashes" right after the charge step is journalled (its context is
// cancelled and its database closed, leaving the run leased and half done);
// a second worker with a new Engine reclaims it once the lease expires,
// replays reserve and charge from the journal, waits for the payment webhook,
// and finalises. It prints what happens line by line and ends with the final
// order and the number of charges the payment provider made: 1.
//
// Run it with `make run` (go run ./examples/checkout-go).
//
// It may import only the engine's Go API (runtime/durable, runtime/db,
// runtime/codec, runtime/task), as a Go user's program would.
package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"time"

	"skydurable/runtime/db"
	"skydurable/runtime/durable"
)

func main() {
	if err := run(context.Background(), os.Stdout, ".skydata"); err != nil {
		fmt.Fprintln(os.Stderr, "checkout-go:", err)
		os.Exit(1)
	}
}

// clock is the engines' injected clock. It is the system clock plus an
// offset, so the story can skip the 30 minutes a crashed worker's lease
// takes to expire.
type clock struct {
	mu     sync.Mutex
	offset time.Duration
}

func (c *clock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return time.Now().Add(c.offset)
}

func (c *clock) Advance(d time.Duration) {
	c.mu.Lock()
	c.offset += d
	c.mu.Unlock()
}

// errCrash is how the first worker stops: as if its process died.
var errCrash = errors.New("simulated crash: the worker process died")

// run plays the story with its databases in dataDir (created; the files are
// replaced each run) and prints it to out.
func run(ctx context.Context, out io.Writer, dataDir string) error {
	shopPath := filepath.Join(dataDir, "checkout-go.db")
	payPath := filepath.Join(dataDir, "checkout-go-payments.db")
	for _, p := range []string{shopPath, payPath} {
		for _, suffix := range []string{"", "-wal", "-shm"} {
			if err := os.Remove(p + suffix); err != nil && !errors.Is(err, os.ErrNotExist) {
				return err
			}
		}
	}
	say := func(format string, args ...any) { fmt.Fprintf(out, format+"\n", args...) }
	say("checkout-go: the checkout saga on SQLite %s (fresh)", shopPath)

	payments, err := OpenPaymentProvider(ctx, payPath)
	if err != nil {
		return err
	}
	defer payments.Close()
	clk := &clock{}
	input := CheckoutInput{OrderID: "order-42", Items: []Item{{SKU: "sku-book", Qty: 2}, {SKU: "sku-pen", Qty: 3}}, Card: "4242", Amount: 3150}

	// Worker 1: sets up, starts the run, and crashes after the charge.
	d1, err := db.Open(ctx, "sqlite", shopPath)
	if err != nil {
		return err
	}
	e1 := durable.New(d1, durable.Options{Clock: clk.Now, WorkerID: "worker-1"})
	if err := e1.Setup(ctx); err != nil {
		return err
	}
	if _, err := d1.ExecRaw(ctx, shopSchema); err != nil {
		return err
	}
	ctx1, crash := context.WithCancel(ctx)
	w1 := &worker{name: "worker-1", out: out, payments: payments, afterCharge: func(context.Context) error {
		crash()
		return errCrash
	}}
	if err := durable.Start(ctx, e1, w1.checkout(), input.OrderID, input); err != nil {
		return err
	}
	say("start:    run %q of workflow \"checkout\": %d items, card %s, %d cents", input.OrderID, len(input.Items), input.Card, input.Amount)
	say("worker-1: polls")
	worked, err := e1.Poll(ctx1, []durable.Workflow{w1.checkout().Erase()})
	if !worked || err == nil {
		return fmt.Errorf("worker-1 was meant to crash after the charge; poll returned %v, %v", worked, err)
	}
	say("worker-1: *** CRASH right after the charge was journalled: the process is gone, its lease is still held ***")
	if err := d1.Close(); err != nil {
		return err
	}

	// Worker 2: a new Engine on a new connection, after the lease expired.
	d2, err := db.Open(ctx, "sqlite", shopPath)
	if err != nil {
		return err
	}
	defer d2.Close()
	e2 := durable.New(d2, durable.Options{Clock: clk.Now, WorkerID: "worker-2"})
	if err := status(ctx, say, e2, input.OrderID); err != nil {
		return err
	}
	clk.Advance(durable.DefaultLease + time.Minute)
	say("... %s later: worker-1's lease has expired; worker-2 starts", durable.DefaultLease+time.Minute)
	w2 := &worker{name: "worker-2", out: out, payments: payments, afterCharge: func(context.Context) error { return nil }}
	defs := []durable.Workflow{w2.checkout().Erase()}
	say("worker-2: polls (reserve and charge replay from the journal: no [effect] lines)")
	if worked, err := e2.Poll(ctx, defs); !worked || err != nil {
		return fmt.Errorf("worker-2 could not resume the run: poll returned %v, %v", worked, err)
	}
	if err := status(ctx, say, e2, input.OrderID); err != nil {
		return err
	}

	// The payment provider's webhook arrives.
	chargeID, err := payments.ChargeID(ctx, input.OrderID+":charge")
	if err != nil {
		return err
	}
	settled := Settled{ChargeID: chargeID, Status: "settled"}
	if err := durable.SignalValue(ctx, e2, input.OrderID, "payment.settled", settledCodec, settled); err != nil {
		return err
	}
	say("webhook:  payment.settled for %s delivered", chargeID)
	say("worker-2: polls")
	if worked, err := e2.Poll(ctx, defs); !worked || err != nil {
		return fmt.Errorf("worker-2 could not finish the run: poll returned %v, %v", worked, err)
	}
	if err := status(ctx, say, e2, input.OrderID); err != nil {
		return err
	}

	r, _, err := e2.Describe(ctx, input.OrderID)
	if err != nil {
		return err
	}
	order, err := orderCodec.Decode(r.Output)
	if err != nil {
		return err
	}
	var stock []string
	rows, err := d2.QueryMaps(ctx, `SELECT sku, stock FROM inventory ORDER BY sku`)
	if err != nil {
		return err
	}
	for _, row := range rows {
		stock = append(stock, row["sku"]+"="+row["stock"])
	}
	charges, err := payments.Count(ctx)
	if err != nil {
		return err
	}
	say("stock:    %s", strings.Join(stock, " "))
	say("order:    %s %s, reservation %s, charge %s, %d cents", order.ID, order.Status, order.Reservation, order.Charge, order.Amount)
	say("charges: %d", charges)
	return nil
}

// status prints the run's row and journal as a worker sees them.
func status(ctx context.Context, say func(string, ...any), e *durable.Engine, runID string) error {
	r, j, err := e.Describe(ctx, runID)
	if err != nil {
		return err
	}
	ids := make([]string, len(j))
	for i, je := range j {
		ids[i] = je.StepID
	}
	line := fmt.Sprintf("status:   %s, attempts %d, journal [%s]", r.Status, r.Attempts, strings.Join(ids, " "))
	if r.WaitingSignal != "" {
		line += ", waiting for signal " + r.WaitingSignal
	}
	if r.ClaimedBy != "" && r.Status == durable.StatusRunning {
		line += ", leased by " + r.ClaimedBy
	}
	say("%s", line)
	return nil
}
