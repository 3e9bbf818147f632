package ui

import (
	"html"
	"net/http"
	"net/url"
	"strings"
	"testing"

	"skydurable/runtime/db"
	"skydurable/runtime/db/dbtest"
	"skydurable/runtime/durable"
)

// shopRun starts run order-1 (the fixture's id too) in namespace shop, with
// input "shop-input", and returns shop's engine.
func shopRun(t *testing.T, f *fixture, d *db.DB) *durable.Engine {
	t.Helper()
	shop := durable.New(d, durable.Options{Namespace: "shop"})
	if err := shop.StartJSON(f.ctx, f.defs[0], "order-1", `"shop-input"`); err != nil {
		t.Fatal(err)
	}
	return shop
}

// TestOneNamespace: a dashboard shows its engine's namespace only, names it,
// and refuses a request for another.
func TestOneNamespace(t *testing.T) {
	dbtest.ForEachDriver(t, func(t *testing.T, _ string, d *db.DB) {
		f := newFixture(t, d, Options{})
		shopRun(t, f, d)
		body := f.page("/runs", `id="nav-namespace">namespace default<`)
		if strings.Contains(body, "shop-input") || strings.Contains(body, `name="ns"`) {
			t.Errorf("the default namespace's dashboard shows shop's run or a selector:\n%s", body)
		}
		f.page("/runs/order-1", "document.title") // the default namespace's order-1
		status, body := f.get("/runs/order-1?ns=shop")
		if status != http.StatusForbidden || !strings.Contains(body, `shows namespace "default" only, not "shop"`) {
			t.Errorf("GET ?ns=shop = %d %q, want 403 naming both", status, body)
		}
	})
}

// TestNamespaceSelector: with Options.Namespaces the dashboard lists the
// namespaces, ?ns= picks one (and a cookie keeps it), its actions act on
// that namespace's runs only, and a name that is not valid is refused.
func TestNamespaceSelector(t *testing.T) {
	dbtest.ForEachDriver(t, func(t *testing.T, _ string, d *db.DB) {
		open := func(name string) (*durable.Engine, error) {
			if err := durable.CheckNamespace(name); err != nil {
				return nil, err
			}
			return durable.New(d, durable.Options{Namespace: name}), nil
		}
		f := newFixture(t, d, Options{Namespaces: open})
		shop := shopRun(t, f, d)
		f.page("/", `<select name="ns" id="nav-namespace">`, `<option value="default" selected>default</option>`, `<option value="shop" >shop</option>`)
		// A namespace with no run yet: the counts' one cell spans the
		// table (workflow, the seven statuses, total).
		if status, body := f.get("/?ns=quiet"); status != http.StatusOK || !strings.Contains(body, `<td colspan="9">no runs yet</td>`) {
			t.Errorf("GET /?ns=quiet = %d, want the overview with a row spanning 9 columns:\n%s", status, body)
		}

		req, _ := http.NewRequest(http.MethodGet, f.srv.URL+"/runs/order-1?ns=shop", nil)
		client := &http.Client{}
		resp, err := client.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		var cookie *http.Cookie
		for _, c := range resp.Cookies() {
			if c.Name == namespaceCookie {
				cookie = c
			}
		}
		if resp.StatusCode != http.StatusOK || cookie == nil || cookie.Value != "shop" {
			t.Fatalf("GET ?ns=shop = %d, cookie %v; want 200 and the namespace's cookie", resp.StatusCode, cookie)
		}
		// The cookie keeps the namespace; shop's run is shown, not the default one's.
		status, body := f.get("/runs/order-1", "Cookie", namespaceCookie+"=shop")
		if status != http.StatusOK || !strings.Contains(body, "shop-input") || strings.Contains(body, html.EscapeString("document.title")) {
			t.Errorf("GET /runs/order-1 in shop = %d, want shop's run:\n%s", status, body)
		}
		if !strings.Contains(body, `<option value="shop" selected>shop</option>`) {
			t.Errorf("the selector does not show shop selected:\n%s", body)
		}

		// Cancel in shop: shop's order-1 only.
		token := f.csrf("/runs/order-1/cancel?ns=shop")
		if status, _ := f.post("/runs/order-1/cancel?ns=shop", url.Values{"csrf": {token}}); status != http.StatusSeeOther && status != http.StatusOK {
			t.Errorf("POST cancel in shop = %d", status)
		}
		if r, _, err := shop.Describe(f.ctx, "order-1"); err != nil || r.Status != durable.StatusCancelled {
			t.Errorf("shop's order-1 = %s, %v; want cancelled", r.Status, err)
		}
		if got := f.status("order-1"); got != durable.StatusWaiting {
			t.Errorf("the default namespace's order-1 is %s, want waiting (untouched)", got)
		}

		status, body = f.get("/?ns=Shop")
		if status != http.StatusBadRequest || !strings.Contains(body, html.EscapeString(`the namespace "Shop" is not a valid name`)) {
			t.Errorf("GET ?ns=Shop = %d %q, want 400 naming it", status, body)
		}
	})
}
