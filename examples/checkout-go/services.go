package main

import (
	"context"
	"fmt"
	"strings"

	"skydurable/runtime/db"
	"skydurable/runtime/durable"
	"skydurable/runtime/task"
)

// shopSchema is the shop's own tables, beside the durable ones.
const shopSchema = `
CREATE TABLE IF NOT EXISTS inventory (sku TEXT PRIMARY KEY, stock INTEGER NOT NULL);
CREATE TABLE IF NOT EXISTS reservations (id TEXT PRIMARY KEY, order_id TEXT NOT NULL, units INTEGER NOT NULL);
CREATE TABLE IF NOT EXISTS orders (id TEXT PRIMARY KEY, reservation TEXT NOT NULL, charge TEXT NOT NULL,
  amount INTEGER NOT NULL, status TEXT NOT NULL);
INSERT INTO inventory (sku, stock) VALUES ('sku-book', 10), ('sku-pen', 50) ON CONFLICT (sku) DO NOTHING;
`

// reserveStock takes the items out of stock and records the reservation. Its
// statements use ctx, the step's context, so they join the step's
// transaction and commit with its journal row.
func reserveStock(ctx context.Context, c *durable.Ctx, w *worker, in CheckoutInput) (Reservation, error) {
	var units int64
	for _, it := range in.Items {
		n, err := c.DB().Exec(ctx, `UPDATE inventory SET stock = stock - ? WHERE sku = ? AND stock >= ?`, it.Qty, it.SKU, it.Qty)
		if err != nil {
			return Reservation{}, err
		}
		if n == 0 {
			return Reservation{}, task.Errorf(task.Conflict, "inventory: not enough %q in stock for %d units", it.SKU, it.Qty)
		}
		units += it.Qty
	}
	res := Reservation{ID: "res-" + in.OrderID, Units: units}
	if _, err := c.DB().Exec(ctx, `INSERT INTO reservations (id, order_id, units) VALUES (?, ?, ?)`, res.ID, in.OrderID, units); err != nil {
		return Reservation{}, err
	}
	w.say("  [effect] reserved %d units for %s (in the step's transaction)", units, in.OrderID)
	return res, nil
}

// finaliseOrder writes the order row inside the step's transaction.
func finaliseOrder(ctx context.Context, c *durable.Ctx, w *worker, in CheckoutInput, res Reservation, ch Charge, s Settled) (Order, error) {
	if s.ChargeID != ch.ID || s.Status != "settled" {
		return Order{}, task.Errorf(task.Conflict, "payment: webhook for %q says %q, expected charge %q settled", s.ChargeID, s.Status, ch.ID)
	}
	o := Order{ID: in.OrderID, Reservation: res.ID, Charge: ch.ID, Amount: ch.Amount, Status: "confirmed"}
	if _, err := c.DB().Exec(ctx, `INSERT INTO orders (id, reservation, charge, amount, status) VALUES (?, ?, ?, ?, ?)`,
		o.ID, o.Reservation, o.Charge, o.Amount, o.Status); err != nil {
		return Order{}, err
	}
	w.say("  [effect] order %s confirmed (in the step's transaction)", o.ID)
	return o, nil
}

// PaymentProvider stands for an external payment service with its own
// database: it cannot take part in the shop's transactions, and it
// deduplicates charges on the caller's idempotency key.
type PaymentProvider struct {
	d *db.DB
}

const paymentsSchema = `CREATE TABLE IF NOT EXISTS charges (
  idempotency_key TEXT PRIMARY KEY, id TEXT NOT NULL, card TEXT NOT NULL, amount INTEGER NOT NULL)`

// OpenPaymentProvider opens (creating) the provider's database at path.
func OpenPaymentProvider(ctx context.Context, path string) (*PaymentProvider, error) {
	d, err := db.Open(ctx, "sqlite", path)
	if err != nil {
		return nil, err
	}
	if _, err := d.ExecRaw(ctx, paymentsSchema); err != nil {
		d.Close()
		return nil, err
	}
	return &PaymentProvider{d: d}, nil
}

// Charge charges card once per idempotency key: a repeated key returns the
// first charge.
func (p *PaymentProvider) Charge(ctx context.Context, key, card string, amount int64) (Charge, error) {
	id := fmt.Sprintf("ch-%s", strings.ReplaceAll(key, ":", "-"))
	if _, err := p.d.Exec(ctx, `INSERT INTO charges (idempotency_key, id, card, amount) VALUES (?, ?, ?, ?)
		ON CONFLICT (idempotency_key) DO NOTHING`, key, id, card, amount); err != nil {
		return Charge{}, err
	}
	var ch Charge
	err := p.d.QueryRow(ctx, `SELECT id, amount FROM charges WHERE idempotency_key = ?`, key).Scan(&ch.ID, &ch.Amount)
	return ch, err
}

// ChargeID is the id of the charge made under key (what the provider's
// webhook reports).
func (p *PaymentProvider) ChargeID(ctx context.Context, key string) (string, error) {
	var id string
	err := p.d.QueryRow(ctx, `SELECT id FROM charges WHERE idempotency_key = ?`, key).Scan(&id)
	return id, err
}

// Count is the number of distinct charges the provider has made.
func (p *PaymentProvider) Count(ctx context.Context) (int64, error) {
	var n int64
	err := p.d.QueryRow(ctx, `SELECT COUNT(*) FROM charges`).Scan(&n)
	return n, err
}

// Close closes the provider's database.
func (p *PaymentProvider) Close() error { return p.d.Close() }
