package postgres

import (
	"cmp"
	"encoding/json"
	"slices"
	"sync"
	"time"
)

// Claim floors: where each claim key level's live due runs begin, so a
// claim skips the row versions before them (pgClaimLevels). A claim
// without floors (every floorRefresh, and whenever the store has none)
// reads each level's earliest live due time and the store keeps, per level,
// the lower of it and that claim's clock less floorMargin; the claims after
// it, for floorRefresh, start each level's range there and read only the
// levels it saw (and both levels of their priorities and of priority 0).
//
// Every write that makes a run due sets its due time from its statement's
// clock (a start, a sleep's end, a signal, a retry, a lease's end), so a
// run made due after a floor was read is above it, unless its writer's
// clock ran more than floorMargin behind the claim's, or its transaction
// committed more than floorMargin after its statement read the clock, or
// it is a fork's copy of a due child (store.TimeTravelSQL keeps the
// child's due time), or it is at a priority the floors do not name. Such a
// run is claimed by the next claim without floors, at most floorRefresh
// later: the bound docs/durable.md ("Claim floors") states. This store's own starts keep it
// exact for its claims: a start at a priority the floors do not name, or
// with a clock behind them, drops them. A claim whose clock is more than
// floorMargin from this machine's (a test's clock) reads without floors.
const (
	floorRefresh = time.Second
	floorMargin  = 2 * time.Second
)

// claimFloors is a store's floors, shared by its claims.
type claimFloors struct {
	mu     sync.Mutex
	read   time.Time      // this machine's clock when they were read; zero: none
	clock  time.Time      // the reading claim's clock
	levels map[int64]bool // the levels they name
	arg    string         // the JSON parameter: [{"k": level, "lo": time}] by level
	low    time.Time      // the lowest of them
}

// floorLevel is one element of the floors parameter.
type floorLevel struct {
	K  int64     `json:"k"`
	Lo time.Time `json:"lo"`
}

// param is a claim's floors parameter at clock now: the floors while they
// are fresh and now is this machine's time (zero: the database's), else
// NULL, a claim that reads them anew.
func (f *claimFloors) param(now time.Time) any {
	f.mu.Lock()
	defer f.mu.Unlock()
	if _, ok := f.fresh(now); !ok {
		return nil
	}
	return f.arg
}

// lowest is the lowest floor of all levels and how long the floors stay
// fresh, when they are fresh at clock now (as param).
func (f *claimFloors) lowest(now time.Time) (time.Time, time.Duration, bool) {
	f.mu.Lock()
	defer f.mu.Unlock()
	left, ok := f.fresh(now)
	return f.low, left, ok
}

// fresh is how long the floors stay fresh, and whether they are, for a
// claim at clock now; f.mu is held.
func (f *claimFloors) fresh(now time.Time) (time.Duration, bool) {
	wall := time.Now()
	left := floorRefresh - wall.Sub(f.read)
	if f.read.IsZero() || left <= 0 {
		return 0, false
	}
	if !now.IsZero() && (now.Sub(wall) > floorMargin || wall.Sub(now) > floorMargin) {
		return 0, false
	}
	return left, true
}

// learn keeps the floors a claim without them read at its clock now: each
// level's earliest live due time (first, at most now), the lower of it and now less
// floorMargin; the levels it did not see, and the other level of each
// priority, from now less floorMargin.
func (f *claimFloors) learn(now time.Time, first map[int64]time.Time) {
	base := now.Add(-floorMargin)
	levels := map[int64]bool{0: true, 1: true}
	for k := range first {
		levels[k], levels[k^1] = true, true
	}
	list := make([]floorLevel, 0, len(levels))
	for k := range levels {
		lo := base
		if t, ok := first[k]; ok && t.Before(lo) {
			lo = t
		}
		list = append(list, floorLevel{K: k, Lo: lo})
	}
	slices.SortFunc(list, func(a, b floorLevel) int { return cmp.Compare(a.K, b.K) })
	low := base
	for _, l := range list {
		if l.Lo.Before(low) {
			low = l.Lo
		}
	}
	arg, _ := json.Marshal(list)
	f.mu.Lock()
	defer f.mu.Unlock()
	f.read, f.clock, f.levels, f.arg, f.low = time.Now(), now, levels, string(arg), low
}

// started drops the floors when this store starts a run they would hide:
// at a priority they do not name, or with a clock behind their reading
// claim's by more than floorMargin.
func (f *claimFloors) started(priority int, now time.Time) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.read.IsZero() {
		return
	}
	k := -2 * int64(priority)
	if !f.levels[k] || (!now.IsZero() && f.clock.Sub(now) > floorMargin) {
		f.read = time.Time{}
	}
}
