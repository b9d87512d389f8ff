package schedules

import "context"

// RoundStream is a barrier schedule handed out one round at a time, for a caller that verifies
// and executes each round as it comes and keeps none (a decomposition of a dense 256-port
// demand makes millions of circuits, which whole take gigabytes).
//
// Header is the schedule without circuits or rounds; its Params.Options are complete once Next
// has reported the end. The rounds come in ascending group order, and every round has
// circuits, a planned duration, or both: executed in order, they are the schedule that the same
// scheduler returns whole, circuit for circuit.
type RoundStream struct {
	Header Schedule
	next   func(ctx context.Context) (StreamRound, bool, error)
}

// StreamRound is one round of a RoundStream. Circuits (and their planned times) are valid only
// until the next call to Next.
type StreamRound struct {
	Group int
	// Round is the round's entry in Schedule.Rounds (its planned duration), nil where the
	// schedule lists none.
	Round    *Round
	Circuits []Circuit
}

// NewRoundStream makes a stream whose rounds next returns in turn; ok false ends it.
func NewRoundStream(header Schedule, next func(ctx context.Context) (StreamRound, bool, error)) *RoundStream {
	return &RoundStream{Header: header, next: next}
}

// Next returns the next round; ok is false after the last one.
func (st *RoundStream) Next(ctx context.Context) (r StreamRound, ok bool, err error) {
	if err := ctx.Err(); err != nil {
		return StreamRound{}, false, err
	}
	return st.next(ctx)
}

// RoundScheduler is a Scheduler that can also hand out its schedule round by round.
type RoundScheduler interface {
	Scheduler
	ScheduleRounds(ctx context.Context, d *Demand, o Options) (*RoundStream, error)
}

// ScheduleRounds plans d with s round by round when s can (a registered barrier scheduler whose
// schedule is a RoundStream), behind the same input checks as Schedule; ok is false, and
// nothing is planned, when it cannot.
func ScheduleRounds(ctx context.Context, s Scheduler, d *Demand, o Options) (st *RoundStream, ok bool, err error) {
	inner := s
	if c, isChecked := s.(checked); isChecked {
		inner = c.s
	}
	rs, can := inner.(RoundScheduler)
	if !can {
		return nil, false, nil
	}
	if err := o.Check(); err != nil {
		return nil, true, err
	}
	if err := o.CheckHorizon(d); err != nil {
		return nil, true, err
	}
	st, err = rs.ScheduleRounds(ctx, d, o)
	return st, true, err
}
