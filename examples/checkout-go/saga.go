package main

import (
	"context"
	"fmt"
	"io"

	"skydurable/runtime/codec"
	"skydurable/runtime/durable"
	"skydurable/runtime/task"
)

// Item is one line of an order.
type Item struct {
	SKU string
	Qty int64
}

// CheckoutInput is the start input of a checkout run.
type CheckoutInput struct {
	OrderID string
	Items   []Item
	Card    string
	Amount  int64 // cents
}

// Reservation is the result of the "reserve" step.
type Reservation struct {
	ID    string
	Units int64
}

// Charge is the result of the "charge" step.
type Charge struct {
	ID     string
	Amount int64
}

// Settled is the payload of the payment.settled webhook signal.
type Settled struct {
	ChargeID string
	Status   string
}

// Order is the workflow's output: the finalised order.
type Order struct {
	ID          string
	Reservation string
	Charge      string
	Amount      int64
	Status      string
}

var itemCodec = codec.Object[Item]().
	With(codec.Field("sku", func(i Item) string { return i.SKU }, func(i *Item, v string) { i.SKU = v }, codec.String)).
	With(codec.Field("qty", func(i Item) int64 { return i.Qty }, func(i *Item, v int64) { i.Qty = v }, codec.Int)).
	Build()

var inputCodec = codec.Object[CheckoutInput]().
	With(codec.Field("orderId", func(c CheckoutInput) string { return c.OrderID }, func(c *CheckoutInput, v string) { c.OrderID = v }, codec.String)).
	With(codec.Field("items", func(c CheckoutInput) []Item { return c.Items }, func(c *CheckoutInput, v []Item) { c.Items = v }, codec.List(itemCodec))).
	With(codec.Field("card", func(c CheckoutInput) string { return c.Card }, func(c *CheckoutInput, v string) { c.Card = v }, codec.String)).
	With(codec.Field("amount", func(c CheckoutInput) int64 { return c.Amount }, func(c *CheckoutInput, v int64) { c.Amount = v }, codec.Int)).
	Build()

var reservationCodec = codec.Object[Reservation]().
	With(codec.Field("id", func(r Reservation) string { return r.ID }, func(r *Reservation, v string) { r.ID = v }, codec.String)).
	With(codec.Field("units", func(r Reservation) int64 { return r.Units }, func(r *Reservation, v int64) { r.Units = v }, codec.Int)).
	Build()

var chargeCodec = codec.Object[Charge]().
	With(codec.Field("id", func(c Charge) string { return c.ID }, func(c *Charge, v string) { c.ID = v }, codec.String)).
	With(codec.Field("amount", func(c Charge) int64 { return c.Amount }, func(c *Charge, v int64) { c.Amount = v }, codec.Int)).
	Build()

var settledCodec = codec.Object[Settled]().
	With(codec.Field("chargeId", func(s Settled) string { return s.ChargeID }, func(s *Settled, v string) { s.ChargeID = v }, codec.String)).
	With(codec.Field("status", func(s Settled) string { return s.Status }, func(s *Settled, v string) { s.Status = v }, codec.String)).
	Build()

var orderCodec = codec.Object[Order]().
	With(codec.Field("id", func(o Order) string { return o.ID }, func(o *Order, v string) { o.ID = v }, codec.String)).
	With(codec.Field("reservation", func(o Order) string { return o.Reservation }, func(o *Order, v string) { o.Reservation = v }, codec.String)).
	With(codec.Field("charge", func(o Order) string { return o.Charge }, func(o *Order, v string) { o.Charge = v }, codec.String)).
	With(codec.Field("amount", func(o Order) int64 { return o.Amount }, func(o *Order, v int64) { o.Amount = v }, codec.Int)).
	With(codec.Field("status", func(o Order) string { return o.Status }, func(o *Order, v string) { o.Status = v }, codec.String)).
	Build()

// worker is what one worker's copy of the workflow needs: where it prints,
// its name, the payment provider, and a hook run right after the charge step
// returns (the first worker "crashes" there).
type worker struct {
	name        string
	out         io.Writer
	payments    *PaymentProvider
	afterCharge func(context.Context) error
}

func (w *worker) say(format string, args ...any) {
	fmt.Fprintf(w.out, "%-9s %s\n", w.name+":", fmt.Sprintf(format, args...))
}

// checkout is the spec's checkout saga: reserve -> charge -> await
// payment.settled -> finalise. Code between steps re-runs on every replay, so
// it only prints; every effect is inside a step.
func (w *worker) checkout() durable.Def[CheckoutInput, Order] {
	return durable.Register("checkout", inputCodec, orderCodec, func(c *durable.Ctx, in CheckoutInput) task.Task[Order] {
		reserve := durable.Step(c, reservationCodec, "reserve", task.From(func(ctx context.Context) (Reservation, error) {
			// Runs inside the step's transaction: exactly once.
			return reserveStock(ctx, c, w, in)
		}))
		return task.AndThen(reserve, func(res Reservation) task.Task[Order] {
			w.say("  reserve  -> %s (%d units)", res.ID, res.Units)
			charge := durable.Step(c, chargeCodec, "charge", task.From(func(ctx context.Context) (Charge, error) {
				// An external service: it cannot join our transaction, so it
				// gets a deterministic idempotency key to deduplicate on.
				key := c.IdempotencyKey("charge")
				ch, err := w.payments.Charge(ctx, key, in.Card, in.Amount)
				if err == nil {
					w.say("  [effect] charged card %s %d cents: %s (idempotency key %s)", in.Card, in.Amount, ch.ID, key)
				}
				return ch, err
			}))
			return task.AndThen(charge, func(ch Charge) task.Task[Order] {
				w.say("  charge   -> %s", ch.ID)
				if err := w.afterCharge(context.Background()); err != nil {
					return task.Fail[Order](err)
				}
				settled := durable.AwaitSignal(c, settledCodec, "payment.settled")
				return task.AndThen(settled, func(s Settled) task.Task[Order] {
					w.say("  payment.settled -> %s %s", s.ChargeID, s.Status)
					return durable.Step(c, orderCodec, "finalise", task.From(func(ctx context.Context) (Order, error) {
						return finaliseOrder(ctx, c, w, in, res, ch, s)
					}))
				})
			})
		})
	})
}
