// Package ui is the durable runs dashboard (`sky durable ui`): an
// http.Handler over an Engine that shows the overview, the runs list, one
// run with its journal and mailbox, and lets an operator signal, cancel or
// retry a run. Pages are html/template (every value HTML-escaped) with the
// assets embedded in the binary; live refresh is a few lines of plain
// JavaScript, so there is no build step and no third-party script.
//
// Security: with Options.Token set, every request must carry the token
// (a bearer header, or the cookie a first visit with ?token= sets); actions
// are POST only and carry a CSRF token; ReadOnly refuses every action. The
// command binds to 127.0.0.1 unless a token is given.
//
// It may import runtime/durable, runtime/durable/view, runtime/task and the
// standard library; never cmd/ (`sky durable ui` serves it).
package ui

import (
	"crypto/rand"
	"crypto/subtle"
	"embed"
	"encoding/hex"
	"errors"
	"html/template"
	"io/fs"
	"net/http"
	"strings"
	"time"

	"skydurable/runtime/durable"
	"skydurable/runtime/task"
)

//go:embed assets
var assets embed.FS

// Options configure the dashboard. The zero value serves every page and
// action to anyone who can reach the address.
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
}

// Server is the dashboard. It holds no state besides its options: every
// page reads the database.
type Server struct {
	e     *durable.Engine
	opts  Options
	pages map[string]*template.Template
	mux   *http.ServeMux
}

const tokenCookie = "sky_durable_ui_token"

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
	for _, page := range []string{"overview", "runs", "run", "action"} {
		t, err := template.New("layout.html").Funcs(funcs).ParseFS(assets, "assets/layout.html", "assets/"+page+".html")
		if err != nil {
			return nil, err
		}
		s.pages[page] = t
	}
	static, err := fs.Sub(assets, "assets")
	if err != nil {
		return nil, err
	}
	mux := http.NewServeMux()
	mux.Handle("GET /static/", http.StripPrefix("/static/", http.FileServerFS(static)))
	mux.HandleFunc("GET /{$}", s.overview)
	mux.HandleFunc("GET /runs", s.runs)
	mux.HandleFunc("GET /runs/{id}", s.run)
	mux.HandleFunc("GET /runs/{id}/{action}", s.confirm)
	mux.HandleFunc("POST /runs/{id}/{action}", s.act)
	s.mux = mux
	return s, nil
}

// ServeHTTP checks the token, sets the security headers and serves the
// page.
func (s *Server) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	h := w.Header()
	h.Set("Content-Security-Policy", "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self'; connect-src 'self'; form-action 'self'; frame-ancestors 'none'; base-uri 'none'")
	h.Set("X-Content-Type-Options", "nosniff")
	h.Set("Referrer-Policy", "no-referrer")
	h.Set("Cache-Control", "no-store")
	if s.opts.Token != "" {
		if t := r.URL.Query().Get("token"); t != "" && r.Method == http.MethodGet && equal(t, s.opts.Token) {
			// Trade the token in the URL for a cookie, and drop it from
			// the address bar (and from history and logs) at once.
			http.SetCookie(w, &http.Cookie{Name: tokenCookie, Value: t, Path: "/", HttpOnly: true, SameSite: http.SameSiteStrictMode})
			q := r.URL.Query()
			q.Del("token")
			u := *r.URL
			u.RawQuery = q.Encode()
			http.Redirect(w, r, u.RequestURI(), http.StatusSeeOther)
			return
		}
		if !s.authorised(r) {
			http.Error(w, "401 unauthorised: this dashboard needs its token; open it once with ?token=<token> or send Authorization: Bearer <token>", http.StatusUnauthorized)
			return
		}
	}
	s.mux.ServeHTTP(w, r)
}

func (s *Server) authorised(r *http.Request) bool {
	if auth, ok := strings.CutPrefix(r.Header.Get("Authorization"), "Bearer "); ok && equal(auth, s.opts.Token) {
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
	if s.opts.Refresh > 0 && page != "action" {
		refresh = int(s.opts.Refresh / time.Millisecond)
	}
	w.Header().Set("Content-Type", "text/html; charset=utf-8")
	w.WriteHeader(status)
	err := s.pages[page].Execute(w, map[string]any{
		"Title": title, "Page": page, "Data": data, "Refresh": refresh,
		"ReadOnly": s.opts.ReadOnly, "CSRF": s.opts.CSRF,
	})
	if err != nil {
		// The status is already sent; the page ends where it failed.
		_, _ = w.Write([]byte("<p class=error>the page failed to render: " + template.HTMLEscapeString(err.Error()) + "</p>"))
	}
}

// fail renders an engine error with the HTTP status of its kind and the
// same text the CLI prints.
func (s *Server) fail(w http.ResponseWriter, err error) {
	status := http.StatusInternalServerError
	if te := task.As(err); te != nil {
		switch te.Kind {
		case task.NotFound:
			status = http.StatusNotFound
		case task.Conflict:
			status = http.StatusConflict
		case task.InvalidInput, task.Decode:
			status = http.StatusBadRequest
		}
	}
	if errors.Is(err, errForbidden) {
		status = http.StatusForbidden
	}
	s.render(w, status, "action", "Error", map[string]any{"Error": err.Error()})
}

var errForbidden = errors.New("this dashboard is read-only (--read-only): actions are refused")
