package dbtest

import (
	"context"
	"sync"
	"testing"
)

// spareAhead is how many copies of the PostgreSQL template are made ahead
// of the tests that take them (and how many are made at once).
const spareAhead = 2

// spares are copies of the PostgreSQL template made in the background
// while tests run, so a test (Open, PreparedURL) takes one instead of
// waiting for its CREATE DATABASE: under load that wait was the larger
// part of a short test. Only under Main (which stops the makers and drops
// the copies no test took); elsewhere each test makes its own.
var spares spareCopies

type spareCopies struct {
	mu       sync.Mutex
	template string        // the template the copies are of; "" before the first take
	ready    chan string   // copies made, by database name
	quit     chan struct{} // closed by stop
	makers   sync.WaitGroup
	over     bool // no more copies are made (one failed, or stop): tests make their own
}

// take returns the DSN of a spare copy of template, dropped when t ends;
// false when there is none to be had (not under Main, or making one failed).
func (s *spareCopies) take(t testing.TB, template string) (string, bool) {
	t.Helper()
	if !dropLater.Load() {
		return "", false
	}
	s.mu.Lock()
	if s.template == "" {
		s.template = template
		s.ready = make(chan string, spareAhead)
		s.quit = make(chan struct{})
		for range spareAhead {
			s.makers.Add(1)
			go s.make()
		}
	}
	ok := s.template == template && !s.over
	s.mu.Unlock()
	if !ok {
		return "", false
	}
	var name string
	select {
	case name, ok = <-s.ready:
		if !ok { // stopped
			return "", false
		}
	case <-s.quit: // making copies failed: the test makes its own
		return "", false
	}
	server := ServerURL()
	t.Cleanup(func() { drop(t, server, name) })
	u, err := withDatabase(server, name)
	if err != nil {
		t.Fatalf("dbtest: %v", err)
	}
	return u, true
}

// make makes copies until stop; the first failure ends the copies made
// ahead (the tests make their own, and report the error themselves).
func (s *spareCopies) make() {
	defer s.makers.Done()
	server := ServerURL()
	for {
		name := "sky_t_" + randomSuffix()
		ctx, cancel := context.WithTimeout(context.Background(), connectTimeout)
		err := adminExec(ctx, server, "CREATE DATABASE "+name+" TEMPLATE "+s.template)
		cancel()
		if err != nil {
			s.mu.Lock()
			if !s.over {
				s.over = true
				close(s.quit)
			}
			s.mu.Unlock()
			return
		}
		select {
		case s.ready <- name:
		case <-s.quit:
			dropInBackground(server, name, "a spare copy no test took")
			return
		}
	}
}

// stop stops the makers and drops the copies no test took (Run calls it
// when the tests are over, before it waits for the drops).
func (s *spareCopies) stop() {
	s.mu.Lock()
	if s.template == "" {
		s.mu.Unlock()
		return
	}
	if !s.over {
		s.over = true
		close(s.quit)
	}
	s.mu.Unlock()
	s.makers.Wait()
	close(s.ready)
	server := ServerURL()
	for name := range s.ready {
		dropInBackground(server, name, "a spare copy no test took")
	}
}
