package httpserver

import (
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
// value`: Path=/, HttpOnly and SameSite=Lax; ok is false for a name that is
// not a valid cookie name.
func cookieHeader(name, val string) (string, bool) {
	s := (&http.Cookie{Name: name, Value: val, Path: "/", HttpOnly: true, SameSite: http.SameSiteLaxMode}).String()
	return s, s != ""
}
