package ubus_test

import (
	"context"
	"errors"
	"io"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/wnms/wnms/internal/ubus"
	"github.com/wnms/wnms/internal/ubus/ubustest"
)

const iface = "phy0-ap0"

func newClient(t *testing.T, cfg ubustest.Config) (*ubus.Client, *ubustest.Server) {
	t.Helper()
	srv := ubustest.New(t, cfg)
	return &ubus.Client{URL: srv.URL, Username: ubustest.Username, Password: ubustest.Password,
		HTTP: srv.Client(), Timeout: 5 * time.Second}, srv
}

func ctxT(t *testing.T) context.Context {
	ctx, cancel := context.WithTimeout(t.Context(), 30*time.Second)
	t.Cleanup(cancel)
	return ctx
}

// kind checks that err is an *ubus.Error of kind want.
func kind(t *testing.T, err, want error) *ubus.Error {
	t.Helper()
	var e *ubus.Error
	if !errors.As(err, &e) || !errors.Is(err, want) {
		t.Fatalf("error %v, want kind %v", err, want)
	}
	return e
}

func TestLoginAndCalls(t *testing.T) {
	c, srv := newClient(t, ubustest.Config{})
	ctx := ctxT(t)

	if _, ok := c.Session(); ok {
		t.Fatal("session before login")
	}
	clients, err := c.HostapdClients(ctx, iface)
	if err != nil {
		t.Fatal(err)
	}
	s, ok := c.Session()
	if !ok || len(s.ID) != 32 || s.Timeout != 300 || s.ACLs["ubus"]["hostapd.*"] == nil {
		t.Fatalf("session %+v", s)
	}
	want := ubus.HostapdClients{Freq: 2412, Clients: map[string]ubus.HostapdClient{
		"22:d3:75:23:7c:55": {Auth: true, Assoc: true, Authorized: true, WMM: true, HE: true, MFP: true,
			RRM: []int{115, 0, 0, 0, 0}, ExtendedCapabilities: []int{4, 0, 8, 0, 0, 0, 0, 64}, AID: 1,
			Bytes: ubus.RxTx{RX: 32595, TX: 10413}, Airtime: ubus.RxTx{RX: 51822, TX: 20417},
			Packets: ubus.RxTx{RX: 489, TX: 99}, Rate: ubus.RxTx{RX: 286700, TX: 229400}, Signal: -20},
	}}
	if diff := cmp.Diff(want, clients); diff != "" {
		t.Errorf("get_clients (-want +got):\n%s", diff)
	}

	// The recording of a build that sends the flags only.
	srv.SetReply("hostapd."+iface, "get_clients", ubustest.File("rax3000m/hostapd_get_clients.json"))
	clients, err = c.HostapdClients(ctx, iface)
	if err != nil {
		t.Fatal(err)
	}
	if cl := clients.Clients["AA:BB:CC:DD:EE:FF"]; !cl.Authorized || !cl.WME || cl.Signal != 0 || clients.Freq != 2412 {
		t.Errorf("recorded get_clients %+v", clients)
	}

	st, err := c.HostapdStatus(ctx, iface)
	if err != nil {
		t.Fatal(err)
	}
	if st.Channel != 1 || st.Freq != 2412 || st.SSID != "OpenWrt" || st.BSSID != "c8:75:f4:74:c6:92" || st.Phy != "phy0" ||
		st.Airtime.Time != 119966 || st.Airtime.TimeBusy != 12986 || st.Airtime.Utilization != 24 || st.BSSColor != 52 {
		t.Errorf("get_status %+v", st)
	}
	if busy, ok := st.BusyPercent(); !ok || busy < 10.8 || busy > 10.9 {
		t.Errorf("busy %v %v", busy, ok)
	}

	info, err := c.IwinfoInfo(ctx, iface)
	if err != nil {
		t.Fatal(err)
	}
	if info.Noise != -83 || info.Channel != 1 || info.Frequency != 2412 || info.TXPower != 20 || info.Phy != "phy0" ||
		info.BSSID != "C8:75:F4:74:C6:92" || !cmp.Equal(info.HWModes, []string{"b", "g", "n", "ax"}) || info.Hardware.Name != "MediaTek MT7981" {
		t.Errorf("iwinfo info %+v", info)
	}

	assoc, err := c.IwinfoAssoclist(ctx, iface)
	if err != nil {
		t.Fatal(err)
	}
	wantAssoc := []ubus.IwinfoStation{{MAC: "22:D3:75:23:7C:55", Signal: -20, SignalAvg: -28, Noise: -82,
		Inactive: 6630, ConnectedTime: 304, Authorized: true, Authenticated: true,
		RX: ubus.IwinfoRate{Packets: 489, Bytes: 32595, HE: true, Rate: 286700, MCS: 11, NSS: 2},
		TX: ubus.IwinfoRate{Packets: 99, Bytes: 10413, HE: true, Rate: 229400, MCS: 9, NSS: 2}}}
	if diff := cmp.Diff(wantAssoc, assoc); diff != "" {
		t.Errorf("assoclist (-want +got):\n%s", diff)
	}

	survey, err := c.IwinfoSurvey(ctx, iface)
	if err != nil {
		t.Fatal(err)
	}
	if len(survey) != 14 || survey[0].MHz != 2412 || survey[0].BusyTime != 1022069 {
		t.Errorf("survey %+v", survey)
	}
	if n, ok := survey[0].NoiseDBm(); !ok || n != -91 {
		t.Errorf("survey noise %d %v", n, ok)
	}
	if _, ok := survey[13].NoiseDBm(); ok {
		t.Error("noise of an unmeasured channel")
	}

	devs, err := c.IwinfoDevices(ctx)
	if err != nil || !cmp.Equal(devs, []string{iface}) {
		t.Errorf("devices %v %v", devs, err)
	}
	ifaces, err := c.HostapdInterfaces(ctx)
	if err != nil || !cmp.Equal(ifaces, []string{iface}) {
		t.Errorf("interfaces %v %v", ifaces, err)
	}
	if n := srv.Requests("session", "login"); n != 1 {
		t.Errorf("%d logins, want 1", n)
	}
}

func TestReloginOnExpiry(t *testing.T) {
	for _, callers := range []int{1, 8} {
		c, srv := newClient(t, ubustest.Config{})
		ctx := ctxT(t)
		if _, err := c.HostapdStatus(ctx, iface); err != nil {
			t.Fatal(err)
		}
		before, _ := c.Session()
		srv.ExpireSessions()
		var wg sync.WaitGroup
		for range callers {
			wg.Go(func() {
				if _, err := c.HostapdStatus(ctx, iface); err != nil {
					t.Error(err)
				}
			})
		}
		wg.Wait()
		if n := srv.Requests("session", "login"); n != 2 {
			t.Errorf("%d callers: %d logins, want 2 (one re-login)", callers, n)
		}
		if after, _ := c.Session(); after.ID == before.ID {
			t.Errorf("%d callers: session not renewed", callers)
		}
	}
}

func TestSessionTimeout(t *testing.T) {
	c, _ := newClient(t, ubustest.Config{})
	c.SessionTimeout = 30 * time.Second
	s, err := c.Login(ctxT(t))
	if err != nil || s.Timeout != 30 {
		t.Fatalf("session %+v %v", s, err)
	}
}

func TestErrors(t *testing.T) {
	tests := []struct {
		name   string
		setup  func(*ubustest.Server)
		call   func(context.Context, *ubus.Client) error
		want   error
		code   int
		logins int
	}{
		{
			name:  "object outside the ACL",
			setup: func(s *ubustest.Server) { s.SetReply("system", "board", []byte(`{"model":"x"}`)) },
			call: func(ctx context.Context, c *ubus.Client) error {
				return c.Call(ctx, "system", "board", nil, nil)
			},
			want: ubus.ErrAccessDenied, code: -32002, logins: 2,
		},
		{
			name: "method outside the ACL",
			call: func(ctx context.Context, c *ubus.Client) error {
				return c.Call(ctx, "hostapd."+iface, "del_client", map[string]any{"addr": "22:d3:75:23:7c:55"}, nil)
			},
			want: ubus.ErrAccessDenied, code: -32002, logins: 2,
		},
		{
			name: "interface gone",
			call: func(ctx context.Context, c *ubus.Client) error {
				_, err := c.HostapdClients(ctx, "phy9-ap0")
				return err
			},
			want: ubus.ErrNotFound, code: -32000, logins: 1,
		},
		{
			name: "unknown iwinfo device",
			call: func(ctx context.Context, c *ubus.Client) error {
				_, err := c.IwinfoInfo(ctx, "wlan9")
				return err
			},
			want: ubus.ErrNotFound, code: 4, logins: 1,
		},
		{
			name:  "ubus timeout",
			setup: func(s *ubustest.Server) { s.SetStatus("hostapd."+iface, "get_status", 7) },
			call: func(ctx context.Context, c *ubus.Client) error {
				_, err := c.HostapdStatus(ctx, iface)
				return err
			},
			want: ubus.ErrTimeout, code: 7, logins: 1,
		},
		{
			name: "arguments not an object",
			call: func(ctx context.Context, c *ubus.Client) error {
				return c.Call(ctx, "iwinfo", "info", []string{"phy0-ap0"}, nil)
			},
			want: ubus.ErrInvalidArgument, logins: 1,
		},
		{
			name:  "HTTP status",
			setup: func(s *ubustest.Server) { s.SetHTTPStatus(502) },
			call: func(ctx context.Context, c *ubus.Client) error {
				_, err := c.HostapdStatus(ctx, iface)
				return err
			},
			want: ubus.ErrHTTPStatus,
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c, srv := newClient(t, ubustest.Config{})
			if tt.setup != nil {
				tt.setup(srv)
			}
			if tt.want != ubus.ErrHTTPStatus {
				// A session of an earlier call: a refusal may mean it expired.
				if _, err := c.Login(ctxT(t)); err != nil {
					t.Fatal(err)
				}
			}
			e := kind(t, tt.call(ctxT(t), c), tt.want)
			if e.Code != tt.code {
				t.Errorf("code %d, want %d", e.Code, tt.code)
			}
			if n := srv.Requests("session", "login"); n != tt.logins {
				t.Errorf("%d logins, want %d", n, tt.logins)
			}
			if tt.want == ubus.ErrHTTPStatus && e.HTTPStatus != 502 {
				t.Errorf("HTTP status %d", e.HTTPStatus)
			}
		})
	}
}

func TestWrongPassword(t *testing.T) {
	c, srv := newClient(t, ubustest.Config{})
	c.Password = "wrong"
	_, err := c.HostapdStatus(ctxT(t), iface)
	e := kind(t, err, ubus.ErrLoginFailed)
	if errors.Is(err, ubus.ErrAccessDenied) || e.Code != 6 {
		t.Errorf("error %v", err)
	}
	if _, ok := c.Session(); ok {
		t.Error("a session after a failed login")
	}
	if n := srv.Requests("hostapd."+iface, "get_status"); n != 0 {
		t.Errorf("%d calls after a failed login", n)
	}
}

func TestGarbage(t *testing.T) {
	for _, body := range []string{
		"<html><body>502 Bad Gateway</body></html>",
		"",
		`{"jsonrpc":"1.0","id":1,"result":[0,{}]}`,
		`{"jsonrpc":"2.0","id":999,"result":[0,{}]}`,
		`{"jsonrpc":"2.0","id":1}`,
		`{"jsonrpc":"2.0","id":1,"result":"yes"}`,
		`{"jsonrpc":"2.0","id":1,"error":{"code":-32700,"message":"Parse error"}}`,
		`[{"jsonrpc":"2.0","id":1,"result":[0]}]`,
	} {
		c, srv := newClient(t, ubustest.Config{})
		srv.SetGarbage([]byte(body))
		_, err := c.HostapdStatus(ctxT(t), iface)
		kind(t, err, ubus.ErrBadReply)
	}
}

func TestSlowReply(t *testing.T) {
	c, srv := newClient(t, ubustest.Config{})
	ctx := ctxT(t)
	if _, err := c.Login(ctx); err != nil {
		t.Fatal(err)
	}
	srv.SetDelay(time.Hour)

	cctx, cancel := context.WithTimeout(ctx, 100*time.Millisecond)
	defer cancel()
	start := time.Now()
	_, err := c.HostapdStatus(cctx, iface)
	kind(t, err, ubus.ErrTimeout)
	if !errors.Is(err, context.DeadlineExceeded) || time.Since(start) > 10*time.Second {
		t.Errorf("error %v after %v", err, time.Since(start))
	}

	c.Timeout = 100 * time.Millisecond
	_, err = c.HostapdStatus(ctx, iface)
	kind(t, err, ubus.ErrTimeout)

	c.Timeout = time.Minute
	cctx, cancel = context.WithCancel(ctx)
	time.AfterFunc(50*time.Millisecond, cancel)
	_, err = c.HostapdStatus(cctx, iface)
	kind(t, err, ubus.ErrCanceled)
	if !errors.Is(err, context.Canceled) {
		t.Errorf("error %v", err)
	}
}

func TestOversizedReply(t *testing.T) {
	big := `{"ssid":"` + strings.Repeat("x", ubus.MaxReplyBytes) + `"}`
	c, srv := newClient(t, ubustest.Config{})
	srv.SetReply("hostapd."+iface, "get_status", []byte(big))
	_, err := c.HostapdStatus(ctxT(t), iface)
	if e := kind(t, err, ubus.ErrBadReply); !strings.Contains(e.Error(), "reply over") {
		t.Errorf("error %v", err)
	}
	// A reply just under the cap is read.
	srv.SetReply("hostapd."+iface, "get_status", []byte(big[:ubus.MaxReplyBytes-1024]+`"}`))
	if st, err := c.HostapdStatus(ctxT(t), iface); err != nil || len(st.SSID) < ubus.MaxReplyBytes-2048 {
		t.Errorf("%d-byte SSID, %v", len(st.SSID), err)
	}
}

func TestReboot(t *testing.T) {
	c, srv := newClient(t, ubustest.Config{})
	ctx := ctxT(t)
	stream, err := c.Subscribe(ctx, "hostapd."+iface)
	if err != nil {
		t.Fatal(err)
	}
	defer stream.Close()
	if err := srv.WaitSubscribers(ctx, "hostapd."+iface, 1); err != nil {
		t.Fatal(err)
	}

	srv.Reboot("phy1-ap0", "phy0-ap1")

	if _, err := stream.Next(); err != io.EOF {
		t.Errorf("stream after reboot: %v, want io.EOF", err)
	}
	_, err = c.HostapdClients(ctx, iface)
	kind(t, err, ubus.ErrNotFound)
	ifaces, err := c.HostapdInterfaces(ctx)
	if err != nil || !cmp.Equal(ifaces, []string{"phy0-ap1", "phy1-ap0"}) {
		t.Fatalf("interfaces %v %v", ifaces, err)
	}
	for _, i := range ifaces {
		if _, err := c.HostapdClients(ctx, i); err != nil {
			t.Error(err)
		}
	}
	if n := srv.Requests("session", "login"); n != 2 {
		t.Errorf("%d logins, want 2", n)
	}
}

func TestSubscribe(t *testing.T) {
	c, srv := newClient(t, ubustest.Config{})
	ctx := ctxT(t)
	obj := "hostapd." + iface
	stream, err := c.Subscribe(ctx, obj)
	if err != nil {
		t.Fatal(err)
	}
	defer stream.Close()
	if err := srv.WaitSubscribers(ctx, obj, 1); err != nil {
		t.Fatal(err)
	}

	events := make(chan ubus.Event, 16)
	errs := make(chan error, 16)
	go func() {
		for {
			ev, err := stream.Next()
			if err != nil {
				errs <- err
				if !errors.Is(err, ubus.ErrBadReply) {
					return
				}
				continue
			}
			events <- ev
		}
	}()
	if n := srv.PublishRaw(obj, string(ubustest.File("source/events_hostapd.phy0-ap0.txt"))); n != 1 {
		t.Fatalf("published to %d streams", n)
	}
	srv.Publish(obj, "deauth", map[string]any{"address": "02:00:00:00:00:01", "ifname": iface})

	type ev struct {
		Type, Address, Target string
		Signal, Freq          int
		Ifname, AuthAlg       string
	}
	want := []ev{
		{"probe", "22:d3:75:23:7c:55", "ff:ff:ff:ff:ff:ff", -41, 2412, "", ""},
		{"auth", "22:d3:75:23:7c:55", "c8:75:f4:74:c6:92", -38, 2412, "", ""},
		{"assoc", "22:d3:75:23:7c:55", "c8:75:f4:74:c6:92", -38, 2412, "", ""},
		{"sta-authorized", "22:d3:75:23:7c:55", "", 0, 0, iface, "sae"},
		{"disassoc", "22:d3:75:23:7c:55", "", 0, 0, iface, ""},
		{"deauth", "02:00:00:00:00:01", "", 0, 0, iface, ""},
	}
	var got []ev
	for range want {
		select {
		case e := <-events:
			got = append(got, ev{e.Type, e.Address, e.Target, e.Signal, e.Freq, e.Ifname, e.AuthAlg})
			if !strings.HasPrefix(string(e.Data), "{") {
				t.Errorf("data %s", e.Data)
			}
		case err := <-errs:
			t.Fatal(err)
		case <-ctx.Done():
			t.Fatal(ctx.Err())
		}
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("events (-want +got):\n%s", diff)
	}

	// Data that is not an object is an error, and the stream goes on.
	srv.PublishRaw(obj, "event: probe\ndata: nonsense\n\nevent: auth\ndata: {\"address\":\"02:00:00:00:00:02\"}\n\n")
	kind(t, <-errs, ubus.ErrBadReply)
	if e := <-events; e.Type != "auth" || e.Address != "02:00:00:00:00:02" {
		t.Errorf("event after a bad one: %+v", e)
	}

	// A line longer than the read buffer, within the cap, is read whole.
	srv.Publish(obj, "auth", map[string]any{"address": "02:00:00:00:00:03", "pad": strings.Repeat("y", ubus.MaxEventLineBytes-100)})
	if e := <-events; e.Type != "auth" || e.Address != "02:00:00:00:00:03" {
		t.Errorf("event of a long line: %+v", e)
	}

	// A line over the cap ends the stream.
	srv.PublishRaw(obj, "data: "+strings.Repeat("x", ubus.MaxEventLineBytes)+"\n\n")
	if e := kind(t, <-errs, ubus.ErrBadReply); !strings.Contains(e.Error(), "line over") {
		t.Errorf("error %v", e)
	}
	if err := srv.WaitSubscribers(ctx, obj, 0); err != nil {
		t.Fatal(err)
	}
}

func TestSubscribeEnds(t *testing.T) {
	c, srv := newClient(t, ubustest.Config{})
	ctx := ctxT(t)
	obj := "hostapd." + iface

	sctx, cancel := context.WithCancel(ctx)
	stream, err := c.Subscribe(sctx, obj)
	if err != nil {
		t.Fatal(err)
	}
	if err := srv.WaitSubscribers(ctx, obj, 1); err != nil {
		t.Fatal(err)
	}
	time.AfterFunc(20*time.Millisecond, cancel)
	_, err = stream.Next()
	kind(t, err, ubus.ErrCanceled)
	if err := srv.WaitSubscribers(ctx, obj, 0); err != nil {
		t.Fatal(err)
	}

	stream, err = c.Subscribe(ctx, obj)
	if err != nil {
		t.Fatal(err)
	}
	if err := srv.WaitSubscribers(ctx, obj, 1); err != nil {
		t.Fatal(err)
	}
	stream.Close()
	if _, err := stream.Next(); err == nil {
		t.Error("Next after Close")
	}
	if err := srv.WaitSubscribers(ctx, obj, 0); err != nil {
		t.Fatal(err)
	}
}

func TestSubscribeRefused(t *testing.T) {
	ctx := ctxT(t)
	t.Run("no such object", func(t *testing.T) {
		c, _ := newClient(t, ubustest.Config{})
		_, err := c.Subscribe(ctx, "hostapd.phy9-ap0")
		if e := kind(t, err, ubus.ErrNotFound); e.Code != 4 {
			t.Errorf("code %d", e.Code)
		}
	})
	t.Run("ACL without :subscribe", func(t *testing.T) {
		c, srv := newClient(t, ubustest.Config{ACL: map[string][]string{"hostapd.*": {"get_*"}}})
		if _, err := c.Login(ctx); err != nil {
			t.Fatal(err)
		}
		_, err := c.Subscribe(ctx, "hostapd."+iface)
		if e := kind(t, err, ubus.ErrAccessDenied); e.Code != -13 {
			t.Errorf("code %d", e.Code)
		}
		if n := srv.Requests("session", "login"); n != 2 {
			t.Errorf("%d logins, want 2", n)
		}
	})
	t.Run("expired session", func(t *testing.T) {
		c, srv := newClient(t, ubustest.Config{})
		if _, err := c.Login(ctx); err != nil {
			t.Fatal(err)
		}
		srv.ExpireSessions()
		stream, err := c.Subscribe(ctx, "hostapd."+iface)
		if err != nil {
			t.Fatal(err)
		}
		stream.Close()
		if n := srv.Requests("hostapd."+iface, ":subscribe"); n != 2 {
			t.Errorf("%d subscriptions, want 2", n)
		}
	})
	t.Run("HTTP status", func(t *testing.T) {
		c, srv := newClient(t, ubustest.Config{})
		if _, err := c.Login(ctx); err != nil {
			t.Fatal(err)
		}
		srv.SetHTTPStatus(404)
		_, err := c.Subscribe(ctx, "hostapd."+iface)
		kind(t, err, ubus.ErrHTTPStatus)
	})
}

func TestBackoff(t *testing.T) {
	b := ubus.Backoff{Min: time.Second, Max: 10 * time.Second}
	for i, hi := range []time.Duration{1, 2, 4, 8, 10, 10} {
		hi *= time.Second
		if d := b.Next(); d < hi/2 || d > hi {
			t.Errorf("attempt %d: %v, want %v..%v", i, d, hi/2, hi)
		}
	}
	b.Reset()
	if d := b.Next(); d > time.Second {
		t.Errorf("after Reset: %v", d)
	}
}
