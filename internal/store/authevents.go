package store

import (
	"context"
	"database/sql"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/wnms/wnms/internal/wnms"
)

// Session caches and how the store keeps them honest.
//
// A replica may keep sessions in memory between requests (api.md §2).
// Whatever ends or alters a session reaches every cache in two ways:
//
//   - The revision (AuthRevision): a cache entry is valid only for the
//     revision it was loaded at. On SQLite the revision is a counter shared
//     through the data directory by every process on the file, bumped after
//     each commit that ends or alters a session. On PostgreSQL it moves each
//     time the notification connection (re)connects, since notifications may
//     have been lost while it was down; while it is down, ok is false and
//     every session is read from the store.
//   - Events (SubscribeAuth): exactly which session or user changed, so a
//     cache drops just those entries. They reach the process that made the
//     change at once, and other replicas on PostgreSQL through LISTEN/NOTIFY:
//     the NOTIFY is sent inside the transaction of the change, so it is
//     delivered if and only if the change commits, typically within
//     milliseconds.
//
// A keep-alive only moves an expiry forward. It sends no event to other
// replicas: a cache that sees a session expire reads it again from the store
// before refusing it.

// authChannelPrefix names the notification channel; the schema is appended
// so stores in different schemas of one database do not hear each other.
const authChannelPrefix = "wnms_auth:"

// authEvents fans auth events out to the subscribers of this process and
// keeps the PostgreSQL notification connection.
type authEvents struct {
	mu   sync.RWMutex
	subs []func(wnms.AuthEvent)

	// PostgreSQL only.
	channel string
	up      atomic.Bool   // the listening connection is established
	gen     atomic.Uint64 // moves on every (re)connect and disconnect
	stop    context.CancelFunc
	done    chan struct{}
}

func (e *authEvents) subscribe(f func(wnms.AuthEvent)) {
	e.mu.Lock()
	e.subs = append(e.subs, f)
	e.mu.Unlock()
}

func (e *authEvents) publish(ev wnms.AuthEvent) {
	e.mu.RLock()
	subs := e.subs
	e.mu.RUnlock()
	for _, f := range subs {
		f(ev)
	}
}

// SubscribeAuth registers f to hear of every committed change that ends or
// alters a session: in this process at once, and on PostgreSQL from every
// other replica through LISTEN/NOTIFY. f must be quick and must not block.
func (s *Store) SubscribeAuth(f func(wnms.AuthEvent)) { s.events.subscribe(f) }

// authCommitted tells this process of a committed change: the shared
// revision moves (SQLite, unless the change only extends a session) and the
// subscribers hear of it.
func (s *Store) authCommitted(ev wnms.AuthEvent) {
	if s.rev != nil && !ev.Extended {
		s.rev.bump()
	}
	s.events.publish(ev)
}

// authTx runs f in a write transaction that ends or alters sessions as ev
// says: the event is notified inside it and published after the commit.
func (s *Store) authTx(ctx context.Context, ev wnms.AuthEvent, f func(*sql.Tx) error) error {
	err := s.tx(ctx, func(tx *sql.Tx) error {
		if err := f(tx); err != nil {
			return err
		}
		return s.notifyAuth(ctx, tx, ev)
	})
	if err == nil {
		s.authCommitted(ev)
	}
	return err
}

func encodeAuthEvent(ev wnms.AuthEvent) string {
	switch {
	case ev.All:
		return "*"
	case ev.Session != "":
		return "s:" + ev.Session
	default:
		return "u:" + strconv.FormatInt(ev.User, 10)
	}
}

func decodeAuthEvent(p string) wnms.AuthEvent {
	switch {
	case strings.HasPrefix(p, "s:"):
		return wnms.AuthEvent{Session: p[2:]}
	case strings.HasPrefix(p, "u:"):
		if id, err := strconv.ParseInt(p[2:], 10, 64); err == nil {
			return wnms.AuthEvent{User: id}
		}
	}
	return wnms.AuthEvent{All: true}
}

// listenAuth keeps a connection that LISTENs on the store's channel until
// ctx ends, reconnecting with backoff. Every (re)connect and disconnect
// moves the revision, so caches start over after a gap in which
// notifications may have been missed.
func (s *Store) listenAuth(ctx context.Context, url string) {
	defer close(s.events.done)
	backoff := 100 * time.Millisecond
	for ctx.Err() == nil {
		err := s.listenOnce(ctx, url)
		if s.events.up.Swap(false) {
			s.events.gen.Add(1)
		}
		if ctx.Err() != nil {
			return
		}
		if err == nil {
			backoff = 100 * time.Millisecond
		}
		select {
		case <-ctx.Done():
			return
		case <-time.After(backoff):
		}
		if backoff < 5*time.Second {
			backoff *= 2
		}
	}
}

func (s *Store) listenOnce(ctx context.Context, url string) error {
	cfg, err := pgx.ParseConfig(url)
	if err != nil {
		return err
	}
	// Its name in pg_stat_activity, where an operator, or a test that
	// cuts it, finds it.
	cfg.RuntimeParams["application_name"] = "wnms-auth-listener"
	cctx, cancel := context.WithTimeout(ctx, 10*time.Second)
	conn, err := pgx.ConnectConfig(cctx, cfg)
	cancel()
	if err != nil {
		return err
	}
	defer conn.Close(context.Background())
	if _, err := conn.Exec(ctx, "LISTEN "+pgx.Identifier{s.events.channel}.Sanitize()); err != nil {
		return err
	}
	s.events.gen.Add(1)
	s.events.up.Store(true)
	s.events.publish(wnms.AuthEvent{All: true})
	for {
		n, err := conn.WaitForNotification(ctx)
		if err != nil {
			return err
		}
		s.events.publish(decodeAuthEvent(n.Payload))
	}
}

// startAuthListener opens the notification channel of a PostgreSQL store.
func (s *Store) startAuthListener(ctx context.Context, url string) error {
	var schema string
	if err := s.r.QueryRowContext(ctx, `SELECT current_schema()`).Scan(&schema); err != nil {
		return err
	}
	s.events.channel = authChannelPrefix + schema
	lctx, stop := context.WithCancel(context.Background())
	s.events.stop, s.events.done = stop, make(chan struct{})
	go s.listenAuth(lctx, url)
	return nil
}

func (s *Store) stopAuthListener() {
	if s.events.stop != nil {
		s.events.stop()
		<-s.events.done
	}
}
