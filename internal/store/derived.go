package store

import (
	"bytes"
	"compress/flate"
	"context"
	"crypto/rand"
	"database/sql"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"maps"
	"math"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/wnms/wnms/internal/wnms"
)

// State derived from ingested records, written behind them.
//
// Every batch of client events or samples says two more things besides its
// records: the latest state of each of its clients (the clients table)
// and which baseline slots are out of date (baseline_dirty). Upserting
// both in each batch's transaction cost more than the records themselves.
// Instead, the batch's transaction stores a journal row (derived_journal)
// with what it says, and the server keeps the same in memory, coalesced
// across batches (wnms.Coalesce for clients; a set for slots). A
// flush (flushEvery) applies what is pending to clients and
// baseline_dirty and deletes the journal rows it covered, in one
// transaction. Reads of either table flush first, so a read on this
// server always sees every batch it acknowledged.
//
// A crash loses only memory: the journal rows of unflushed batches are
// still there, and the next server to open the store applies them in
// journal order (on PostgreSQL, other replicas also apply rows of another
// server that are older than journalOrphanAge). Applying a journal row
// twice changes nothing more than applying it once.

const (
	// maxPending is how many clients and slots wait in memory at most; a
	// batch that would leave more flushes before it answers.
	maxPending = 100_000
	// journalOrphanAge is how old another server's journal row must be
	// before this one applies it (PostgreSQL).
	journalOrphanAge = 10 * time.Second
)

// derived is a customer's pending derived state.
type derived struct {
	clients map[int64]wnms.ClientUpdate // by boxId
	slots   map[int64]bool
}

// add coalesces d2 (newer) into d.
func (d *derived) add(d2 *derived) {
	for box, u := range d2.clients {
		if cur, ok := d.clients[box]; ok {
			u = wnms.Coalesce(cur, u)
		}
		d.clients[box] = u
	}
	for slot := range d2.slots {
		d.slots[slot] = true
	}
}

func newDerived() *derived {
	return &derived{clients: map[int64]wnms.ClientUpdate{}, slots: map[int64]bool{}}
}

// derivedOf is a derived state holding clients, which it takes over
// rather than copies: an ingest batch's client updates are the largest
// thing it holds while it is written, and a copy would double them. The
// caller gives clients up.
func derivedOf(clients map[int64]wnms.ClientUpdate) *derived {
	d := newDerived()
	if clients != nil {
		d.clients = clients
	}
	return d
}

// writeBehind holds a store's pending derived state.
type writeBehind struct {
	owner   string // this store's name in the journal
	flushMu sync.Mutex
	mu      sync.Mutex
	pending map[int64]*derived // by customer
	// flushing is what the flush under way took out of pending, until it
	// has committed (or put it back), and flushingVersion the version its
	// slots have meanwhile: a read then finds their marks without waiting
	// for the flush (DirtySlots).
	flushing        map[int64]*derived
	flushingVersion int64
	journal         []int64 // the journal rows pending covers
	size            int     // clients and slots pending
	timer           *time.Timer
	every           time.Duration // flushEvery of the store's engine
	max             int           // maxPending, unless a test lowers it
	waiting         atomic.Bool   // anything pending, or a flush not yet committed
	closed          bool
}

// A journal row's body is the derived state in a compact binary form,
// compressed: the slots, then the clients, each field in a fixed order.
// Integers are varints; a string is its length and bytes; an optional
// value is a presence byte and the value; each of the four timestamps of
// a client's name, username, event type and signal is its distance before
// the client's timestamp. 5,000 clients and 2,900 slots take about 100 KB.
//
// Version 2 appends to each client its IP and the IP's timestamp (as a
// distance, like the others). Version 1 bodies, which servers before it
// wrote and a restart may still find in the journal, are read as clients
// with no IP.
const journalVersion = 2

// encodeJournal is d as a journal row's body.
func encodeJournal(d *derived) ([]byte, error) {
	b := []byte{journalVersion}
	slots := slices.Sorted(maps.Keys(d.slots))
	b = binary.AppendUvarint(b, uint64(len(slots)))
	for _, slot := range slots {
		b = binary.AppendVarint(b, slot)
	}
	boxes := slices.Sorted(maps.Keys(d.clients))
	b = binary.AppendUvarint(b, uint64(len(boxes)))
	str := func(s string) {
		b = binary.AppendUvarint(b, uint64(len(s)))
		b = append(b, s...)
	}
	for _, box := range boxes {
		u := d.clients[box].Stamped()
		b = binary.AppendVarint(b, box)
		str(u.MacAddress)
		b = binary.AppendVarint(b, u.Timestamp)
		for _, s := range []string{u.Name, u.Username, u.EventType, u.BSSID, u.SSID, u.Protocol, u.APName} {
			str(s)
		}
		b = binary.AppendVarint(b, int64(u.Channel))
		b = binary.AppendVarint(b, u.LocationID)
		if b = append(b, boolByte(u.APBoxID != nil)); u.APBoxID != nil {
			b = binary.AppendVarint(b, *u.APBoxID)
		}
		if b = append(b, boolByte(u.RSSI != nil)); u.RSSI != nil {
			b = binary.AppendVarint(b, int64(*u.RSSI))
		}
		if b = append(b, boolByte(u.DataRate != nil)); u.DataRate != nil {
			b = binary.LittleEndian.AppendUint64(b, math.Float64bits(*u.DataRate))
		}
		for _, ts := range []int64{u.NameTS, u.UsernameTS, u.EventTypeTS, u.SignalTS} {
			b = binary.AppendVarint(b, u.Timestamp-ts)
		}
		str(u.IP)
		b = binary.AppendVarint(b, u.Timestamp-u.IPTS)
	}
	var buf bytes.Buffer
	var zw *flate.Writer
	select {
	case zw = <-journalWriters:
		zw.Reset(&buf)
	default:
		var err error
		if zw, err = flate.NewWriter(&buf, flate.BestSpeed); err != nil {
			return nil, err
		}
	}
	defer func() {
		zw.Reset(io.Discard) // let go of buf
		select {
		case journalWriters <- zw:
		default: // as many kept as are used at once; this one goes
		}
	}()
	if _, err := zw.Write(b); err != nil {
		return nil, err
	}
	if err := zw.Close(); err != nil {
		return nil, err
	}
	return buf.Bytes(), nil
}

// journalWriters are compressors of journal bodies to use again: a new
// one allocates about a megabyte of tables, and every ingest batch writes
// a journal row, so under load new ones were most of what the server
// allocated (and what the collector then had to sweep). They are kept in
// a free list of their own, not a sync.Pool: a pool is emptied by every
// other collection, which under load comes every second or so, and a
// sixth of what the server allocated was still new compressors. Journals
// are written by ingest's transactions, one at a time on SQLite and a few
// at once on PostgreSQL: two are kept (2 MB).
var journalWriters = make(chan *flate.Writer, 2)

func boolByte(v bool) byte {
	if v {
		return 1
	}
	return 0
}

// maxJournalBody bounds a journal row's body once decompressed: far more
// than any batch's clients and slots make.
const maxJournalBody = 256 << 20

// decodeJournal is the derived state a journal row's body holds.
func decodeJournal(raw []byte) (*derived, error) {
	b, err := io.ReadAll(io.LimitReader(flate.NewReader(bytes.NewReader(raw)), maxJournalBody))
	if err != nil {
		return nil, err
	}
	r := journalReader{b: b}
	version := r.byte()
	if version < 1 || version > journalVersion {
		return nil, fmt.Errorf("journal body version %d, want 1 to %d", version, journalVersion)
	}
	d := newDerived()
	for n := r.uvarint(); n > 0 && r.err == nil; n-- {
		d.slots[r.varint()] = true
	}
	for n := r.uvarint(); n > 0 && r.err == nil; n-- {
		box := r.varint()
		var u wnms.ClientUpdate
		u.MacAddress = r.str()
		u.Timestamp = r.varint()
		for _, s := range []*string{&u.Name, &u.Username, &u.EventType, &u.BSSID, &u.SSID, &u.Protocol, &u.APName} {
			*s = r.str()
		}
		u.Channel = int(r.varint())
		u.LocationID = r.varint()
		if r.byte() == 1 {
			v := r.varint()
			u.APBoxID = &v
		}
		if r.byte() == 1 {
			v := int(r.varint())
			u.RSSI = &v
		}
		if r.byte() == 1 {
			v := math.Float64frombits(r.uint64())
			u.DataRate = &v
		}
		for _, ts := range []*int64{&u.NameTS, &u.UsernameTS, &u.EventTypeTS, &u.SignalTS} {
			*ts = u.Timestamp - r.varint()
		}
		u.IPTS = u.Timestamp
		if version >= 2 {
			u.IP = r.str()
			u.IPTS = u.Timestamp - r.varint()
		}
		d.clients[box] = u
	}
	if r.err == nil && len(r.b) > 0 {
		r.err = errors.New("trailing bytes")
	}
	return d, r.err
}

// journalReader reads a journal body, remembering the first error.
type journalReader struct {
	b   []byte
	err error
}

func (r *journalReader) fail() {
	if r.err == nil {
		r.err = errors.New("journal body cut short")
	}
	r.b = nil
}

func (r *journalReader) byte() byte {
	if len(r.b) < 1 {
		r.fail()
		return 0
	}
	v := r.b[0]
	r.b = r.b[1:]
	return v
}

func (r *journalReader) uvarint() uint64 {
	v, n := binary.Uvarint(r.b)
	if n <= 0 {
		r.fail()
		return 0
	}
	r.b = r.b[n:]
	return v
}

func (r *journalReader) varint() int64 {
	v, n := binary.Varint(r.b)
	if n <= 0 {
		r.fail()
		return 0
	}
	r.b = r.b[n:]
	return v
}

func (r *journalReader) uint64() uint64 {
	if len(r.b) < 8 {
		r.fail()
		return 0
	}
	v := binary.LittleEndian.Uint64(r.b)
	r.b = r.b[8:]
	return v
}

func (r *journalReader) str() string {
	n := r.uvarint()
	if n > uint64(len(r.b)) {
		r.fail()
		return ""
	}
	s := string(r.b[:n])
	r.b = r.b[n:]
	return s
}

// journal stores d as a journal row of the customer in b's transaction
// and answers its id.
func (s *Store) journal(ctx context.Context, b *bulkTx, customerID int64, d *derived) (int64, error) {
	raw, err := encodeJournal(d)
	if err != nil {
		return 0, err
	}
	return b.QueryInt(ctx, `INSERT INTO derived_journal (customer_id, owner, created_ms, body) VALUES ($1, $2, $3, $4) RETURNING id`,
		customerID, s.behind.owner, s.Now().UnixMilli(), raw)
}

// writeDerived runs store (the records' statements, which answer how many
// rows were new) in a grouped telemetry write and, when any was new,
// journals d there and makes it pending once committed. It answers the
// new rows.
func (s *Store) writeDerived(ctx context.Context, customerID int64, d *derived, store func(b *bulkTx) (int64, error)) (int, error) {
	var n, id int64
	run := func(b *bulkTx) error {
		var err error
		if n, err = store(b); err != nil || n == 0 {
			id = 0
			return err
		}
		id, err = s.journal(ctx, b, customerID, d)
		return err
	}
	full := false
	after := func() {
		if id != 0 {
			full = s.behind.add(s, customerID, d, id)
		}
	}
	if err := s.writeGrouped(ctx, run, after); err != nil {
		return 0, err
	}
	if full {
		if err := s.FlushDerived(ctx); err != nil {
			return 0, err
		}
	}
	return int(n), nil
}

// add makes d (journalled as row id) pending and answers whether the
// pending state is full.
func (w *writeBehind) add(s *Store, customerID int64, d *derived, id int64) bool {
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.pending == nil {
		w.pending = map[int64]*derived{}
	}
	p := w.pending[customerID]
	if p == nil {
		p = newDerived()
		w.pending[customerID] = p
	}
	before := len(p.clients) + len(p.slots)
	p.add(d)
	w.size += len(p.clients) + len(p.slots) - before
	w.journal = append(w.journal, id)
	w.waiting.Store(true)
	w.schedule(s)
	limit := w.max
	if limit == 0 {
		limit = maxPending
	}
	return w.size >= limit
}

// FlushDerived applies the pending derived state to clients and
// baseline_dirty now, deleting the journal rows it covers in the same
// transaction. On failure it stays pending, and is tried again.
func (s *Store) FlushDerived(ctx context.Context) error {
	w := &s.behind
	if !w.waiting.Load() {
		return nil
	}
	w.flushMu.Lock()
	defer w.flushMu.Unlock()
	return s.flushDerivedLocked(ctx)
}

// flushDerivedLocked is FlushDerived with w.flushMu held.
func (s *Store) flushDerivedLocked(ctx context.Context) error {
	w := &s.behind
	w.mu.Lock()
	pending, journal := w.pending, w.journal
	w.pending, w.journal, w.size = nil, nil, 0
	if len(journal) > 0 {
		w.flushing, w.flushingVersion = pending, -journal[len(journal)-1]
	}
	if len(journal) == 0 {
		w.waiting.Store(false)
	}
	if w.timer != nil {
		w.timer.Stop()
		w.timer = nil
	}
	w.mu.Unlock()
	if len(journal) == 0 {
		return nil
	}
	err := s.bulk(ctx, s.tw, func(b *bulkTx) error {
		customers := slices.Sorted(maps.Keys(pending))
		if err := lockClientsShared(ctx, b, slices.DeleteFunc(slices.Clone(customers), func(c int64) bool {
			return len(pending[c].clients) == 0
		})); err != nil {
			return err
		}
		for _, cust := range customers {
			if err := applyDerived(ctx, b, cust, pending[cust]); err != nil {
				return err
			}
		}
		return deleteJournal(ctx, b, journal)
	})
	w.mu.Lock()
	defer w.mu.Unlock()
	w.flushing = nil
	if err == nil {
		// waiting stayed set while the flush ran, so that a read settling
		// meanwhile waited for its commit instead of reading around it.
		w.waiting.Store(len(w.journal) > 0)
		return nil
	}
	// Put it back, older than what arrived meanwhile.
	for cust, d := range w.pending {
		if p := pending[cust]; p != nil {
			p.add(d)
		} else {
			pending[cust] = d
		}
	}
	w.pending, w.journal = pending, append(journal, w.journal...)
	w.size = 0
	for _, d := range pending {
		w.size += len(d.clients) + len(d.slots)
	}
	w.waiting.Store(true)
	w.schedule(s)
	return fmt.Errorf("write derived state: %w", err)
}

// schedule makes s flush what is pending within w.every, unless a flush is
// scheduled already or the store is closing; w.mu is held. A failed flush
// stays pending and schedules the next try.
func (w *writeBehind) schedule(s *Store) {
	if w.timer == nil && !w.closed {
		w.timer = time.AfterFunc(w.every, func() { s.FlushDerived(context.Background()) })
	}
}

// closeBehind flushes what is pending and stops the flush timer for good.
func (s *Store) closeBehind() error {
	if s.tw == nil {
		return nil
	}
	err := s.FlushDerived(context.Background())
	w := &s.behind
	w.mu.Lock()
	defer w.mu.Unlock()
	w.closed = true
	if w.timer != nil {
		w.timer.Stop()
		w.timer = nil
	}
	return err
}

// settle makes a read see every acknowledged batch: it flushes what is
// pending first.
func (s *Store) settle(ctx context.Context) error {
	return s.FlushDerived(ctx)
}

// settleClients is settle for a statement on the clients table alone: it
// flushes only when a client's state is pending, after any flush under
// way. Pending baseline slots change nothing there, and a scoped ingest
// (a data source's, whose client updates are written at once) then does
// not flush them, a transaction of their own, before each batch.
func (s *Store) settleClients(ctx context.Context) error {
	w := &s.behind
	// A flush under way has taken its clients out of pending: wait for it.
	w.flushMu.Lock()
	defer w.flushMu.Unlock()
	w.mu.Lock()
	clients := false
	for _, d := range w.pending {
		if len(d.clients) > 0 {
			clients = true
			break
		}
	}
	w.mu.Unlock()
	if !clients {
		return nil
	}
	return s.flushDerivedLocked(ctx)
}

// applyDerived upserts a customer's derived state in b's transaction,
// which holds the customer's lock on its clients shared when d has
// clients (lockClientsShared).
func applyDerived(ctx context.Context, b *bulkTx, customerID int64, d *derived) error {
	if err := upsertClients(ctx, b, customerID, d.clients); err != nil {
		return err
	}
	if len(d.slots) == 0 {
		return nil
	}
	slots := slices.Sorted(maps.Keys(d.slots))
	_, err := b.Insert(ctx, "baseline_dirty", []string{"customer_id", "slot", "version"},
		dirtySlots(customerID, len(slots), func(i int) int64 { return slots[i] }), dirtyConflict)
	return err
}

// deleteJournal deletes journal rows ids in b's transaction.
func deleteJournal(ctx context.Context, b *bulkTx, ids []int64) error {
	for start := 0; start < len(ids); start += 500 {
		chunk := ids[start:min(start+500, len(ids))]
		list := make([]string, len(chunk))
		for i, id := range chunk {
			list[i] = strconv.FormatInt(id, 10)
		}
		if _, err := b.Exec(ctx, `DELETE FROM derived_journal WHERE id IN (`+strings.Join(list, ",")+`)`); err != nil {
			return err
		}
	}
	return nil
}

// replayJournal applies journal rows that no live server holds in
// memory, oldest first, one row a transaction: on SQLite (one server) all
// of them; on PostgreSQL every row of another owner older than
// journalOrphanAge, and with all, every row of another owner.
func (s *Store) replayJournal(ctx context.Context, all bool) (int, error) {
	cutoff := s.Now().Add(-journalOrphanAge).UnixMilli()
	if all || !sharedByReplicas(s.dialect) {
		cutoff = s.Now().Add(time.Hour).UnixMilli()
	}
	applied := 0
	after := int64(0)
	for {
		var id, cust int64
		var raw []byte
		err := s.tw.QueryRowContext(ctx, `SELECT id, customer_id, body FROM derived_journal
			WHERE id > $1 AND owner <> $2 AND created_ms <= $3 ORDER BY id LIMIT 1`, after, s.behind.owner, cutoff).Scan(&id, &cust, &raw)
		if errors.Is(err, sql.ErrNoRows) {
			return applied, nil
		}
		if err != nil {
			return applied, err
		}
		after = id
		d, err := decodeJournal(raw)
		if err != nil {
			return applied, fmt.Errorf("journal row %d: %w", id, err)
		}
		err = s.bulk(ctx, s.tw, func(b *bulkTx) error {
			if len(d.clients) > 0 {
				if err := lockClientsShared(ctx, b, []int64{cust}); err != nil {
					return err
				}
			}
			if err := applyDerived(ctx, b, cust, d); err != nil {
				return err
			}
			return deleteJournal(ctx, b, []int64{id})
		})
		if err != nil {
			return applied, err
		}
		applied++
	}
}

// sweepJournal applies, every journalOrphanAge until stop closes, the
// journal rows that servers which stopped without flushing left
// (PostgreSQL, where other servers share the store).
func (s *Store) sweepJournal(stop <-chan struct{}) {
	t := time.NewTicker(journalOrphanAge)
	defer t.Stop()
	for {
		select {
		case <-stop:
			return
		case <-t.C:
			s.replayJournal(context.Background(), false)
		}
	}
}

// newJournalOwner names this store in the journal.
func newJournalOwner() string { return rand.Text() }
