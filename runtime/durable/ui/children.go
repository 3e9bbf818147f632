package ui

import (
	"context"

	"skydurable/runtime/durable"
)

// ShowChildren is how many children the run page lists, newest first (as
// many as `sky durable show` prints); a "more" link opens the runs list
// filtered by parent, which pages through all of them.
const ShowChildren = 20

// childrenView is the run page's children: the newest ShowChildren, and
// the address of the whole list when there are more.
type childrenView struct {
	Runs []durable.Run
	More string
}

// children reads the newest children of run id, one more than it shows to
// know whether there are more: one query on the parent index.
func (s *Server) children(ctx context.Context, id string) (childrenView, error) {
	runs, err := s.e.ListRuns(ctx, durable.ListFilter{Parent: id, Limit: ShowChildren + 1})
	if err != nil {
		return childrenView{}, err
	}
	var v childrenView
	if len(runs) > ShowChildren {
		runs = runs[:ShowChildren]
		v.More = "/runs?" + listQuery{Parent: id}.values().Encode()
	}
	v.Runs = runs
	return v, nil
}
