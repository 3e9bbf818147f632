package ui

import (
	"bytes"
	"context"
	"encoding/base64"
	"net/http/httptest"
	"strings"
	"testing"

	"skydurable/runtime/codec"
	"skydurable/runtime/db"
	"skydurable/runtime/db/dbtest"
	"skydurable/runtime/durable"
	"skydurable/runtime/task"
)

// TestEncryptedPayloadsShowTheirKey: a dashboard whose engine lacks the key
// a run's payloads are sealed with shows each as "encrypted (key k1)" and
// the rest of the run as usual; with the key, the payloads themselves.
func TestEncryptedPayloadsShowTheirKey(t *testing.T) {
	dbtest.ForEachDriver(t, func(t *testing.T, driver string, d *db.DB) {
		ctx := context.Background()
		keys := "k1:" + base64.StdEncoding.EncodeToString(bytes.Repeat([]byte{1}, 32))
		sealer := durable.New(d, durable.Options{WorkerID: "sealer", Keys: keys})
		if err := sealer.Setup(ctx); err != nil {
			t.Fatal(err)
		}
		w := durable.Register("vault", codec.String, codec.String, func(c *durable.Ctx, in string) task.Task[string] {
			return task.AndThen(durable.Step(c, codec.String, "charge", task.Succeed("SECRET-step")), func(s string) task.Task[string] {
				return task.Map(durable.AwaitSignal(c, codec.String, "go"), func(g string) string { return in + s + g })
			})
		})
		if err := durable.Start(ctx, sealer, w, "vault-1", "SECRET-input"); err != nil {
			t.Fatal(err)
		}
		if err := sealer.Signal(ctx, "vault-1", "go", `"SECRET-signal"`); err != nil {
			t.Fatal(err)
		}
		for {
			worked, err := sealer.Poll(ctx, []durable.Workflow{w.Erase()})
			if err != nil {
				t.Fatal(err)
			}
			if !worked {
				break
			}
		}
		for _, tc := range []struct {
			keys       string
			want, deny []string
		}{
			{"", []string{"encrypted (key k1)", "charge", "done"}, []string{"SECRET"}},
			{keys, []string{"SECRET-input", "SECRET-step", "SECRET-signal"}, []string{"encrypted (key"}},
		} {
			e := durable.New(d, durable.Options{WorkerID: "ui", Keys: tc.keys})
			s, err := New(e, Options{})
			if err != nil {
				t.Fatal(err)
			}
			srv := httptest.NewServer(s)
			f := &fixture{t: t, ctx: ctx, e: e, srv: srv, ui: s}
			code, body := f.get("/runs/vault-1")
			srv.Close()
			if code != 200 {
				t.Fatalf("run page: %d %s", code, body)
			}
			for _, want := range tc.want {
				if !strings.Contains(body, want) {
					t.Errorf("with the key %v: the run page does not show %q", tc.keys != "", want)
				}
			}
			for _, deny := range tc.deny {
				if strings.Contains(body, deny) {
					t.Errorf("with the key %v: the run page shows %q", tc.keys != "", deny)
				}
			}
		}
	})
}
