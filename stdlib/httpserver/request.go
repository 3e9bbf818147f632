package httpserver

import (
	"fmt"
	"mime"
	"net/http"
	"net/url"
	"strings"

	"skydurable/runtime/value"
)

// requestRecord is the Request a handler receives, real Sky's record:
// method, path (without the query), body, headers (by canonical name,
// repeated values joined with ", "), params (the route's `:name`
// captures), query (the first value of each name), cookies and remoteAddr.
func requestRecord(r *http.Request, body string, params map[string]string) *value.Record {
	headers := map[string]string{}
	for k, vs := range r.Header {
		headers[k] = strings.Join(vs, ", ")
	}
	query := map[string]string{}
	for k, vs := range r.URL.Query() {
		query[k] = vs[0]
	}
	cookies := map[string]string{}
	for _, c := range r.Cookies() {
		if _, seen := cookies[c.Name]; !seen {
			cookies[c.Name] = c.Value
		}
	}
	return value.NewRecord(map[string]value.Value{
		"method":     r.Method,
		"path":       r.URL.Path,
		"body":       body,
		"headers":    stringDict(headers),
		"params":     stringDict(params),
		"query":      stringDict(query),
		"cookies":    stringDict(cookies),
		"remoteAddr": r.RemoteAddr,
	})
}

func stringDict(m map[string]string) *value.Dict {
	var pairs []value.Value
	for k, v := range m {
		pairs = append(pairs, value.Tuple{k, v})
	}
	d, _ := value.DictFromList(value.FromSlice(pairs)) // String keys always compare
	return d
}

// dictLookup is the value of key in a Dict String String field of rec;
// fold compares keys ignoring case (header names).
func dictLookup(rec *value.Record, field, key string, fold bool) (string, bool) {
	v, _ := rec.Get(field)
	d, _ := v.(*value.Dict)
	for i := range d.Size() {
		k, val := d.Entry(i)
		ks, _ := k.(string)
		if ks == key || fold && strings.EqualFold(ks, key) {
			s, _ := val.(string)
			return s, true
		}
	}
	return "", false
}

// formValue is real Sky's Server.formValue: the first value of a field of
// a url-encoded form body, else of the query string, else "" (as Go's
// Request.FormValue; a multipart body is not read).
func formValue(rec *value.Record, name string) string {
	if ct, ok := dictLookup(rec, "headers", "Content-Type", true); ok {
		if mt, _, _ := mime.ParseMediaType(ct); mt == "application/x-www-form-urlencoded" {
			b, _ := rec.Get("body")
			body, _ := b.(string)
			if form, err := url.ParseQuery(body); err == nil && form.Has(name) {
				return form.Get(name)
			}
		}
	}
	v, _ := dictLookup(rec, "query", name, false)
	return v
}

// cookieHeader is the Set-Cookie value of real Sky's `Server.cookie name
// value`: Path=/, HttpOnly and SameSite=Lax.
func cookieHeader(name, val string) (string, error) {
	return cookieLine(name, val, func(c *http.Cookie) { c.Path, c.HttpOnly, c.SameSite = "/", true, http.SameSiteLaxMode })
}

// withCookie is real Sky's untyped `Server.withCookie`, in its three call
// shapes: `withCookie cookie resp` (a Cookie from `cookie`), `withCookie name
// value resp` (the safe defaults) and `withCookie name value attrs resp`
// (the attribute string as written, e.g. "Path=/; HttpOnly; Max-Age=0").
// Each adds one Set-Cookie line to the Response's headers.
func withCookie(a []value.Value) (value.Value, error) {
	const fn = "Server.withCookie"
	addTo := func(line string) value.Value {
		return value.NewFunc(fn, 1, func(r []value.Value) (value.Value, error) { return addSetCookie(fn, r[0], line) })
	}
	switch first := a[0].(type) {
	case value.Ctor:
		if first.Name == "Cookie" && len(first.Args) == 1 {
			if line, ok := first.Args[0].(string); ok {
				return addTo(line), nil
			}
		}
	case string:
		return value.NewFunc(fn, 1, func(v []value.Value) (value.Value, error) {
			val, ok := v[0].(string)
			if !ok {
				return nil, value.BadArg(fn, "a cookie value (String)", v[0])
			}
			return value.NewFunc(fn, 1, func(x []value.Value) (value.Value, error) {
				if attrs, ok := x[0].(string); ok {
					line, err := cookieLine(first, val, func(c *http.Cookie) {})
					if err != nil {
						return nil, err
					}
					if attrs = strings.TrimSpace(attrs); attrs != "" {
						line += "; " + attrs
					}
					return addTo(line), nil
				}
				line, err := cookieLine(first, val, func(c *http.Cookie) { c.Path, c.HttpOnly, c.SameSite = "/", true, http.SameSiteLaxMode })
				if err != nil {
					return nil, err
				}
				return addSetCookie(fn, x[0], line)
			}), nil
		}), nil
	}
	return nil, value.BadArg(fn, "a Cookie or a cookie name (String)", a[0])
}

// cookieLine is the Set-Cookie text of name=value with the attributes set
// sets; a name that is not a cookie name is a runtime error naming it.
func cookieLine(name, val string, set func(*http.Cookie)) (string, error) {
	c := &http.Cookie{Name: name, Value: val}
	set(c)
	if s := c.String(); s != "" {
		return s, nil
	}
	return "", &value.RuntimeError{Message: fmt.Sprintf("Server.cookie %q: not a valid cookie name; hint: use letters, digits and - _ . only", name)}
}

// addSetCookie is the Response resp with one more Set-Cookie line (lines of
// one header are kept newline-separated and sent as separate headers).
func addSetCookie(fn string, resp value.Value, line string) (value.Value, error) {
	rec, ok := resp.(*value.Record)
	if !ok || rec.Index("headers") < 0 {
		return nil, value.BadArg(fn, "a Response", resp)
	}
	h, _ := rec.Get("headers")
	headers, _ := h.(*value.Dict)
	if old, found, _ := headers.Get("Set-Cookie"); found {
		if s, ok := old.(string); ok && s != "" {
			line = s + "\n" + line
		}
	}
	headers, err := headers.Insert("Set-Cookie", line)
	if err != nil {
		return nil, err
	}
	return rec.With("headers", headers), nil
}
