package durable_test

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"time"

	"skydurable/runtime/codec"
	"skydurable/runtime/db"
	"skydurable/runtime/durable"
	"skydurable/runtime/task"
)

// A checkout saga: reserve, charge (with an idempotency key for the payment
// provider), wait for the settlement webhook, then finalise. Each poll
// advances the run until it suspends or completes.
func Example() {
	ctx := context.Background()
	dir, _ := os.MkdirTemp("", "durable-example")
	defer os.RemoveAll(dir)
	d, err := db.Open(ctx, "sqlite", filepath.Join(dir, "app.db"))
	if err != nil {
		panic(err)
	}
	defer d.Close()

	now := time.Date(2030, 1, 1, 0, 0, 0, 0, time.UTC)
	e := durable.New(d, durable.Options{Clock: func() time.Time { return now }})
	if err := e.Setup(ctx); err != nil {
		panic(err)
	}

	checkout := durable.Register("checkout", codec.String, codec.String,
		func(c *durable.Ctx, order string) task.Task[string] {
			reserve := durable.Step(c, codec.String, "reserve", task.Succeed("res-"+order))
			return task.AndThen(reserve, func(res string) task.Task[string] {
				charge := durable.Step(c, codec.String, "charge", task.Succeed("charged with key "+c.IdempotencyKey("charge")))
				return task.AndThen(charge, func(ch string) task.Task[string] {
					return task.AndThen(durable.AwaitSignal(c, codec.String, "payment.settled"), func(settled string) task.Task[string] {
						return task.Succeed(res + "; " + ch + "; " + settled)
					})
				})
			})
		})
	defs := []durable.Workflow{checkout.Erase()}

	_ = durable.Start(ctx, e, checkout, "order-7", "7")
	_, _ = e.Poll(ctx, defs) // runs reserve and charge, then suspends
	run, journal, _ := e.Describe(ctx, "order-7")
	fmt.Println(run.Status, run.WaitingSignal, len(journal))

	_ = e.Signal(ctx, "order-7", "payment.settled", `"settled"`)
	_, _ = e.Poll(ctx, defs) // replays the steps, consumes the signal, completes
	run, _, _ = e.Describe(ctx, "order-7")
	fmt.Println(run.Status, run.Output)
	// Output:
	// waiting payment.settled 2
	// done "res-7; charged with key order-7:charge; settled"
}

// Sleep suspends a run; Poll finds nothing due until the clock passes the
// journalled wake time.
func ExampleSleep() {
	ctx := context.Background()
	dir, _ := os.MkdirTemp("", "durable-example")
	defer os.RemoveAll(dir)
	d, _ := db.Open(ctx, "sqlite", filepath.Join(dir, "app.db"))
	defer d.Close()

	now := time.Date(2030, 1, 1, 0, 0, 0, 0, time.UTC)
	e := durable.New(d, durable.Options{Clock: func() time.Time { return now }})
	_ = e.Setup(ctx)
	reminder := durable.Register("reminder", codec.String, codec.String,
		func(c *durable.Ctx, who string) task.Task[string] {
			return task.AndThen(durable.Sleep(c, 24*60*60*1000), func(struct{}) task.Task[string] {
				return durable.Step(c, codec.String, "send", task.Succeed("reminded "+who))
			})
		})
	defs := []durable.Workflow{reminder.Erase()}
	_ = durable.Start(ctx, e, reminder, "remind-ann", "ann")

	worked, _ := e.Poll(ctx, defs)
	fmt.Println("first poll worked:", worked)
	worked, _ = e.Poll(ctx, defs)
	fmt.Println("nothing due yet:", !worked)
	now = now.Add(24 * time.Hour)
	_, _ = e.Poll(ctx, defs)
	run, _, _ := e.Describe(ctx, "remind-ann")
	fmt.Println(run.Status, run.Output)
	// Output:
	// first poll worked: true
	// nothing due yet: true
	// done "reminded ann"
}

// RunNow starts a run and advances it in the caller, at once: a handler
// that answers with the workflow's outcome needs no worker for it. Run again
// with the same id, it reads the run's result instead of running it again.
func ExampleRunNow() {
	ctx := context.Background()
	dir, _ := os.MkdirTemp("", "durable-example")
	defer os.RemoveAll(dir)
	d, _ := db.Open(ctx, "sqlite", filepath.Join(dir, "app.db"))
	defer d.Close()

	e := durable.New(d, durable.Options{WorkerID: "web-1"})
	_ = e.Setup(ctx)
	charges := 0
	checkout := durable.Register("checkout", codec.String, codec.String,
		func(c *durable.Ctx, order string) task.Task[string] {
			reserve := durable.Step(c, codec.String, "reserve", task.Succeed("res-"+order))
			return task.AndThen(reserve, func(res string) task.Task[string] {
				return durable.Step(c, codec.String, "charge", task.From(func(context.Context) (string, error) {
					charges++
					return res + " charged", nil
				}))
			})
		})

	out, err := durable.RunNow(ctx, e, checkout, "order-7", "7")
	fmt.Println(*out, err)
	out, _ = durable.RunNow(ctx, e, checkout, "order-7", "7") // the id exists: its result
	run, journal, _ := e.Describe(ctx, "order-7")
	fmt.Println(*out, "| charges:", charges, "|", run.Status, "by", run.ClaimedBy, "in", run.Attempts, "attempt,", len(journal), "steps")
	// Output:
	// res-7 charged <nil>
	// res-7 charged | charges: 1 | done by web-1 in 1 attempt, 2 steps
}

// All fans out one child run per warehouse and fans in their outputs in
// order; the parent sleeps until the last child is done, which wakes it.
func ExampleAll() {
	ctx := context.Background()
	dir, _ := os.MkdirTemp("", "durable-example")
	defer os.RemoveAll(dir)
	d, _ := db.Open(ctx, "sqlite", filepath.Join(dir, "app.db"))
	defer d.Close()

	now := time.Date(2030, 1, 1, 0, 0, 0, 0, time.UTC)
	e := durable.New(d, durable.Options{Clock: func() time.Time { return now }})
	_ = e.Setup(ctx)
	ship := durable.Register("ship", codec.String, codec.String,
		func(c *durable.Ctx, warehouse string) task.Task[string] {
			return durable.Step(c, codec.String, "pack", task.Succeed("parcel from "+warehouse))
		})
	order := durable.Register("order", codec.String, codec.String,
		func(c *durable.Ctx, id string) task.Task[string] {
			kids := []durable.Child[string]{{Key: "berlin", Input: "Berlin"}, {Key: "lyon", Input: "Lyon"}}
			return task.Map(durable.All(c, ship, kids), func(parcels []string) string {
				return fmt.Sprint(parcels)
			})
		})
	defs := []durable.Workflow{order.Erase(), ship.Erase()}
	_ = durable.Start(ctx, e, order, "order-7", "7")

	_, _ = e.Poll(ctx, []durable.Workflow{order.Erase()}) // starts both children, suspends
	kids, _ := e.ListRuns(ctx, durable.ListFilter{Parent: "order-7"})
	fmt.Println(len(kids), "children of", kids[0].ParentID)
	for worked := true; worked; {
		worked, _ = e.Poll(ctx, defs)
	}
	out, _ := durable.Result(ctx, e, order, "order-7")
	fmt.Println(*out)
	// Output:
	// 2 children of order-7
	// [parcel from Berlin parcel from Lyon]
}
