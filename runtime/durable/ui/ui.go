// Package ui is the durable runs dashboard (`sky durable ui`): an
// http.Handler over an Engine that shows the overview, the runs list, one
// run with its timeline (timeline.go) and its journal and mailbox a page at
// a time, the diff of two runs and the orphan signals, and lets an
// operator signal, cancel, retry or fork a run (fork.go), or retry, cancel
// or release every run of a filtered list (bulk.go). Pages are html/template (every value HTML-escaped) with the
// assets embedded in the binary; live refresh is a few lines of plain
// JavaScript, so there is no build step and no third-party script.
//
// Namespaces: the dashboard shows the runs of its engine's namespace only,
// and refuses a request for another (?ns=): its token is scoped to that
// namespace. With Options.Namespaces it serves every namespace: a selector
// lists them and ?ns=NAME, on any page, picks one (a cookie keeps it for
// the pages that follow).
//
// Security: without Options.Token only requests addressed to this machine
// by name (Host 127.0.0.1, localhost, [::1]) are answered, so a web page
// cannot reach the dashboard through DNS rebinding; with it, every request
// must carry the token (a bearer header, or the cookie a first visit with
// ?token= sets). Either way actions are POST only, same-origin (Origin or
// Referer) and carry a CSRF token; ReadOnly refuses every action. The
// command binds to 127.0.0.1 unless a token is given.
//
// It may import runtime/durable, runtime/durable/view, runtime/task and the
// standard library; never cmd/ (`sky durable ui` serves it).
package ui

import (
	"context"
	"crypto/rand"
	"crypto/subtle"
	"embed"
	"encoding/hex"
	"errors"
	"fmt"
	"html/template"
	"io/fs"
	"net"
	"net/http"
	"net/url"
	"slices"
	"strings"
	"time"
	"unicode/utf8"

	"skydurable/runtime/durable"
	"skydurable/runtime/task"
)

//go:embed assets
var assets embed.FS

// Options configure the dashboard. The zero value serves every page and
// action to requests addressed to this machine by name (Host 127.0.0.1,
// localhost, [::1]), actions only from its own pages.
type Options struct {
	// Token, when set, is required on every request: an "Authorization:
	// Bearer <token>" header, or the cookie set by visiting any page with
	// ?token=<token> once.
	Token string
	// ReadOnly hides the actions and refuses them (403).
	ReadOnly bool
	// Now is the clock the pages' relative times use. Default time.Now.
	Now func() time.Time
	// Refresh is how often pages reload their content in place. Default
	// 5s; negative turns live refresh off.
	Refresh time.Duration
	// CSRF is the token every action's form must carry. Default: random,
	// new for each Handler.
	CSRF string
	// Namespaces, when set, makes the dashboard serve every namespace of
	// the database, not only its engine's: it returns the engine of
	// namespace name (an error for a name that is not valid). Its token
	// then grants every namespace.
	Namespaces func(name string) (*durable.Engine, error)
}

// Server is the dashboard. It holds no state besides its options: every
// page reads the database.
type Server struct {
	e     *durable.Engine
	opts  Options
	pages map[string]*template.Template
	mux   *http.ServeMux
	// namespaces lists the database's namespaces for the selector, on
	// the copy of the Server a request of a dashboard with
	// Options.Namespaces is served by (nil otherwise).
	namespaces []string
}

const (
	tokenCookie     = "sky_durable_ui_token"
	namespaceCookie = "sky_durable_ui_namespace"
)

// serverKey is the context key of the Server a request is served by.
type serverKey struct{}

// serving is the Server r is served by: s, or the copy ServeHTTP made for
// the namespace r selects.
func (s *Server) serving(r *http.Request) *Server {
	if c, ok := r.Context().Value(serverKey{}).(*Server); ok {
		return c
	}
	return s
}

// New makes the dashboard over e.
func New(e *durable.Engine, opts Options) (*Server, error) {
	if opts.Now == nil {
		opts.Now = time.Now
	}
	if opts.Refresh == 0 {
		opts.Refresh = 5 * time.Second
	}
	if opts.CSRF == "" {
		b := make([]byte, 16)
		if _, err := rand.Read(b); err != nil {
			return nil, err
		}
		opts.CSRF = hex.EncodeToString(b)
	}
	s := &Server{e: e, opts: opts, pages: map[string]*template.Template{}}
	for _, page := range []string{"overview", "runs", "run", "action", "bulk", "fork", "diff", "orphans"} {
		t, err := template.New("layout.html").Funcs(funcs).ParseFS(assets, "assets/layout.html", "assets/"+page+".html")
		if err != nil {
			return nil, err
		}
		s.pages[page] = t
	}
	mux := http.NewServeMux()
	// Each page is served by the Server of the request's namespace.
	handle := func(pattern string, page func(*Server, http.ResponseWriter, *http.Request)) {
		mux.HandleFunc(pattern, func(w http.ResponseWriter, r *http.Request) { page(s.serving(r), w, r) })
	}
	mux.HandleFunc("GET /static/{file}", static)
	handle("GET /{$}", (*Server).overview)
	handle("GET /runs", (*Server).runs)
	handle("GET /runs/{id}", (*Server).run)
	handle("GET /runs/{id}/{action}", (*Server).confirm)
	handle("POST /runs/{id}/{action}", (*Server).act)
	handle("GET /runs/{id}/fork", (*Server).forkConfirm)
	handle("POST /runs/{id}/fork", (*Server).fork)
	handle("GET /diff", (*Server).diff)
	handle("GET /orphans", (*Server).orphans)
	handle("GET /bulk/{action}", (*Server).bulkConfirm)
	handle("POST /bulk/{action}", (*Server).bulkAct)
	s.mux = mux
	return s, nil
}

// static serves the stylesheet and the script; any other name is 404.
func static(w http.ResponseWriter, r *http.Request) {
	name := r.PathValue("file")
	if !strings.HasSuffix(name, ".css") && !strings.HasSuffix(name, ".js") {
		http.NotFound(w, r)
		return
	}
	if _, err := fs.Stat(assets, "assets/"+name); err != nil {
		http.NotFound(w, r)
		return
	}
	http.ServeFileFS(w, r, assets, "assets/"+name)
}

// ServeHTTP sets the security headers, checks the Host (without a token)
// or the token, the origin of a POST and the path, and serves the page.
func (s *Server) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	h := w.Header()
	h.Set("Content-Security-Policy", "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self'; connect-src 'self'; form-action 'self'; frame-ancestors 'none'; base-uri 'none'")
	h.Set("X-Content-Type-Options", "nosniff")
	// same-origin, not no-referrer: under no-referrer a browser sends
	// "Origin: null" with the dashboard's own forms, which the same-origin
	// check of a POST must refuse; other sites still get no Referer.
	h.Set("Referrer-Policy", "same-origin")
	h.Set("Cache-Control", "no-store")
	if s.opts.Token == "" && !loopbackHost(r.Host) {
		http.Error(w, fmt.Sprintf("421 misdirected request: this dashboard has no token, so it only answers requests addressed to 127.0.0.1, localhost or [::1], not to Host %q; "+
			"hint: open it at http://127.0.0.1:<port>/, or for remote access start it with a token (set SKY_DURABLE_UI_TOKEN, or --token)", r.Host), http.StatusMisdirectedRequest)
		return
	}
	if s.opts.Token != "" {
		if t := r.URL.Query().Get("token"); t != "" && r.Method == http.MethodGet && equal(t, s.opts.Token) {
			// Trade the token in the URL for a cookie, and drop it from
			// the address bar (and from history and logs) at once.
			http.SetCookie(w, &http.Cookie{Name: tokenCookie, Value: t, Path: "/", HttpOnly: true, SameSite: http.SameSiteStrictMode})
			q := r.URL.Query()
			q.Del("token")
			http.Redirect(w, r, localPath(r.URL.EscapedPath(), q.Encode()), http.StatusSeeOther)
			return
		}
		if !s.authorised(r) {
			http.Error(w, "401 unauthorised: this dashboard needs its token; open it once with ?token=<token> or send Authorization: Bearer <token>", http.StatusUnauthorized)
			return
		}
	}
	if r.Method != http.MethodGet && r.Method != http.MethodHead {
		if origin, ok := sameOrigin(r); !ok {
			http.Error(w, fmt.Sprintf("403 forbidden: a %s must come from this dashboard's own pages, but its origin is %q (Host %q); "+
				"hint: submit the form from the dashboard itself; a script must send an Origin header naming http://%s", r.Method, origin, r.Host, r.Host), http.StatusForbidden)
			return
		}
	}
	if !validText(r.URL.Path) {
		http.NotFound(w, r)
		return
	}
	for k, vs := range r.URL.Query() {
		for _, v := range vs {
			if !validText(k) || !validText(v) {
				http.Error(w, fmt.Sprintf("400 bad request: the query parameter %q is not printable UTF-8 text; hint: remove it from the address", k), http.StatusBadRequest)
				return
			}
		}
	}
	r, ok := s.selectNamespace(w, r)
	if !ok {
		return
	}
	s.mux.ServeHTTP(w, r)
}

// selectNamespace picks the namespace r asks for (?ns=, else the cookie a
// previous ?ns= set, else the engine's) and returns r carrying the Server
// that serves it; false when it answered r itself (a namespace this
// dashboard does not show, or one that cannot be read).
func (s *Server) selectNamespace(w http.ResponseWriter, r *http.Request) (*http.Request, bool) {
	asked := r.URL.Query().Get("ns")
	if s.opts.Namespaces == nil {
		if asked != "" && asked != s.e.Namespace() {
			http.Error(w, fmt.Sprintf("403 forbidden: this dashboard shows namespace %q only, not %q; "+
				"hint: start one for it with --namespace %s, or one for every namespace with --all-namespaces", s.e.Namespace(), asked, asked), http.StatusForbidden)
			return r, false
		}
		return r, true
	}
	ns := asked
	if ns == "" {
		if c, err := r.Cookie(namespaceCookie); err == nil {
			ns = c.Value
		}
	}
	c := *s
	if ns != "" && ns != s.e.Namespace() {
		e, err := s.opts.Namespaces(ns)
		if err != nil {
			s.fail(w, err)
			return r, false
		}
		c.e = e
	}
	if asked != "" {
		http.SetCookie(w, &http.Cookie{Name: namespaceCookie, Value: asked, Path: "/", HttpOnly: true, SameSite: http.SameSiteStrictMode})
	}
	list, err := s.e.Namespaces(r.Context())
	if err != nil {
		s.fail(w, err)
		return r, false
	}
	if !slices.Contains(list, c.e.Namespace()) {
		list = append(list, c.e.Namespace()) // selected, no run yet
		slices.Sort(list)
	}
	c.namespaces = list
	return r.WithContext(context.WithValue(r.Context(), serverKey{}, &c)), true
}

// loopbackHost reports whether a request's Host names this machine:
// localhost or a loopback address, with or without a port. Any other name
// may be one a web page's DNS points at 127.0.0.1 (DNS rebinding), so a
// dashboard without a token does not answer it.
func loopbackHost(host string) bool {
	if h, _, err := net.SplitHostPort(host); err == nil {
		host = h
	}
	host = strings.TrimSuffix(strings.TrimPrefix(host, "["), "]")
	if strings.EqualFold(host, "localhost") {
		return true
	}
	ip := net.ParseIP(host)
	return ip != nil && ip.IsLoopback()
}

// sameOrigin reports whether a request comes from a page of this very
// address: its Origin header, or without one its Referer, is http(s)://
// and the request's Host. It returns the origin it judged.
func sameOrigin(r *http.Request) (string, bool) {
	origin := r.Header.Get("Origin")
	if origin == "" {
		origin = r.Header.Get("Referer")
	}
	u, err := url.Parse(origin)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return origin, false
	}
	return u.Scheme + "://" + u.Host, strings.EqualFold(u.Host, r.Host)
}

// localPath is a path and query as a Location on the same host: leading
// slashes and backslashes become one slash, so "//evil.example/" (which a
// browser reads as another host) stays a path here.
func localPath(path, query string) string {
	p := "/" + strings.TrimLeft(path, "/\\")
	if query != "" {
		p += "?" + query
	}
	return p
}

// validText is UTF-8 without control characters: what a path or query
// value of the dashboard can be (run ids refuse control characters).
func validText(s string) bool {
	if !utf8.ValidString(s) {
		return false
	}
	for _, r := range s {
		if r < 0x20 || r == 0x7f {
			return false
		}
	}
	return true
}

func (s *Server) authorised(r *http.Request) bool {
	// The scheme's name is case-insensitive (RFC 9110, 11.1): bearer,
	// BEARER and Bearer alike.
	if scheme, auth, ok := strings.Cut(r.Header.Get("Authorization"), " "); ok && strings.EqualFold(scheme, "Bearer") && equal(auth, s.opts.Token) {
		return true
	}
	c, err := r.Cookie(tokenCookie)
	return err == nil && equal(c.Value, s.opts.Token)
}

// equal compares secrets in constant time.
func equal(a, b string) bool { return subtle.ConstantTimeCompare([]byte(a), []byte(b)) == 1 }

// render writes page with data and the common fields.
func (s *Server) render(w http.ResponseWriter, status int, page, title string, data any) {
	var refresh int
	if s.opts.Refresh > 0 && page != "action" && page != "bulk" && page != "fork" {
		refresh = int(s.opts.Refresh / time.Millisecond)
	}
	w.Header().Set("Content-Type", "text/html; charset=utf-8")
	w.WriteHeader(status)
	err := s.pages[page].Execute(w, map[string]any{
		"Title": title, "Page": page, "Data": data, "Refresh": refresh,
		"ReadOnly": s.opts.ReadOnly, "CSRF": s.opts.CSRF,
		"Namespace": s.e.Namespace(), "Namespaces": s.namespaces,
	})
	if err != nil {
		// The status is already sent; the page ends where it failed.
		_, _ = w.Write([]byte("<p class=error>the page failed to render: " + template.HTMLEscapeString(err.Error()) + "</p>"))
	}
}

// fail renders an engine error with the HTTP status of its kind and the
// same text the CLI prints.
func (s *Server) fail(w http.ResponseWriter, err error) {
	s.render(w, statusOf(err), "action", "Error", map[string]any{"Error": err.Error()})
}

// statusOf is the HTTP status of an engine error's kind: 404 for no such
// run, 409 for a refusal, 400 for bad input, 403 for read-only, else 500.
func statusOf(err error) int {
	if errors.Is(err, errForbidden) {
		return http.StatusForbidden
	}
	if te := task.As(err); te != nil {
		switch te.Kind {
		case task.NotFound:
			return http.StatusNotFound
		case task.Conflict:
			return http.StatusConflict
		case task.InvalidInput, task.Decode:
			return http.StatusBadRequest
		}
	}
	return http.StatusInternalServerError
}

// operator is a request's context naming the dashboard's client as the
// actor of what it does (a run's history records "dashboard <address>").
func operator(r *http.Request) context.Context {
	return durable.WithActor(r.Context(), "dashboard "+r.RemoteAddr)
}

var errForbidden = errors.New("this dashboard is read-only (--read-only): actions are refused")
