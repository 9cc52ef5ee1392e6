package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"image"
	"image/png"
	"math"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"sort"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/chromedp/cdproto/log"
	"github.com/chromedp/cdproto/network"
	"github.com/chromedp/cdproto/runtime"
	"github.com/chromedp/chromedp"

	"github.com/wnms/wnms/internal/apitest"
	"github.com/wnms/wnms/internal/wnms"
)

// browser runs headless Chromium (Debian's chromium) driven over the
// DevTools protocol, one browser process per person (its own cookies and
// storage). Every error the pages print or throw is kept: a console test
// ends with none.
type browser struct {
	t      testing.TB
	path   string
	mu     sync.Mutex
	errors []string
}

// startBrowser finds Chromium, or skips the test when it is not installed
// (CI sets WNMS_TEST_REQUIRE_CHROMIUM and installs it, so there it fails).
func startBrowser(t testing.TB) *browser {
	t.Helper()
	path, err := exec.LookPath("chromium")
	if err != nil {
		if os.Getenv("WNMS_TEST_REQUIRE_CHROMIUM") != "" {
			t.Fatal("chromium is not installed and WNMS_TEST_REQUIRE_CHROMIUM is set")
		}
		t.Skip("chromium is not installed")
	}
	return &browser{t: t, path: path}
}

// page starts a browser of its own and answers its tab.
func (b *browser) page() context.Context {
	b.t.Helper()
	profile, err := os.MkdirTemp("", "wnms-chromium-")
	if err != nil {
		b.t.Fatal(err)
	}
	opts := append(chromedp.DefaultExecAllocatorOptions[:], chromedp.ExecPath(b.path), chromedp.NoSandbox,
		chromedp.DisableGPU, chromedp.Flag("disable-quic", true), chromedp.Flag("disable-background-networking", true),
		chromedp.Flag("disable-component-update", true), chromedp.Flag("disable-sync", true),
		chromedp.UserDataDir(profile), chromedp.WindowSize(1280, 1000))
	actx, cancelAlloc := chromedp.NewExecAllocator(context.Background(), opts...)
	ctx, cancel := chromedp.NewContext(actx)
	b.t.Cleanup(func() {
		cancel()
		cancelAlloc()
		// Chromium's helper processes may still write to the profile a
		// moment after the browser is gone.
		for i := 0; i < 50 && os.RemoveAll(profile) != nil; i++ {
			time.Sleep(100 * time.Millisecond)
		}
	})
	chromedp.ListenTarget(ctx, func(ev any) {
		var msg string
		switch ev := ev.(type) {
		case *runtime.EventConsoleAPICalled:
			if ev.Type == runtime.APITypeError || ev.Type == runtime.APITypeWarning || ev.Type == runtime.APITypeAssert {
				var parts []string
				for _, a := range ev.Args {
					parts = append(parts, string(a.Value)+a.Description)
				}
				msg = "console." + string(ev.Type) + ": " + strings.Join(parts, " ")
			}
		case *runtime.EventExceptionThrown:
			msg = "exception: " + ev.ExceptionDetails.Text
			if ev.ExceptionDetails.Exception != nil {
				msg += " " + ev.ExceptionDetails.Exception.Description
			}
		case *log.EventEntryAdded:
			if ev.Entry.Level == log.LevelError || ev.Entry.Level == log.LevelWarning {
				msg = "log " + string(ev.Entry.Source) + ": " + ev.Entry.Text + " " + ev.Entry.URL
			}
		}
		if msg != "" {
			b.mu.Lock()
			b.errors = append(b.errors, msg)
			b.mu.Unlock()
		}
	})
	if err := chromedp.Run(ctx, runtime.Enable(), log.Enable()); err != nil {
		b.t.Fatalf("starting chromium: %v", err)
	}
	return ctx
}

// consoleErrors are the errors every page printed or threw so far.
func (b *browser) consoleErrors() []string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return append([]string(nil), b.errors...)
}

// browse runs actions with a deadline, failing the test with what the page
// showed when they fail.
//
// A view redraws what changed when the event stream or its poll says so,
// as a person would see it: an action that found its element just before
// a redraw replaced it fails with "Could not find node with given id"
// before it did anything (a click resolves its element before it sends
// the mouse events). Such an action is run again, alone, on the element
// now there; any other error fails the test.
func browse(t testing.TB, ctx context.Context, what string, actions ...chromedp.Action) {
	t.Helper()
	cctx, cancel := context.WithTimeout(ctx, 60*time.Second)
	defer cancel()
	var err error
	for _, a := range actions {
		for try := 0; ; try++ {
			if err = chromedp.Run(cctx, a); err == nil || try == 4 || !strings.Contains(err.Error(), "Could not find node with given id") {
				break
			}
		}
		if err != nil {
			break
		}
	}
	if err != nil {
		var text string
		tctx, tcancel := context.WithTimeout(ctx, 5*time.Second)
		defer tcancel()
		chromedp.Run(tctx, chromedp.Evaluate(`document.body.innerText.slice(0, 3000)`, &text))
		t.Fatalf("%s: %v\npage:\n%s", what, err, text)
	}
}

// view opens a view of the console by its hash and waits until it has
// rendered its data.
func view(t testing.TB, ctx context.Context, hash, name string) {
	t.Helper()
	browse(t, ctx, "open "+hash,
		chromedp.Evaluate(fmt.Sprintf(`location.hash = %q`, hash), nil),
		chromedp.WaitVisible(fmt.Sprintf(`#view[data-view=%q][data-ready="1"]`, name), chromedp.ByQuery))
}

// text is the visible text of the view.
func text(t *testing.T, ctx context.Context) string {
	t.Helper()
	var s string
	browse(t, ctx, "read the view", chromedp.Text(`#view`, &s, chromedp.ByQuery))
	return s
}

func count(t *testing.T, ctx context.Context, selector string) int {
	t.Helper()
	var n int
	browse(t, ctx, "count "+selector, chromedp.Evaluate(fmt.Sprintf(`document.querySelectorAll(%q).length`, selector), &n))
	return n
}

// screenshotDir is where the console tests keep their screenshots:
// $WNMS_TEST_ARTIFACTS/console (CI keeps them), else under the temporary
// directory.
func screenshotDir(t testing.TB) string {
	t.Helper()
	dir := os.Getenv("WNMS_TEST_ARTIFACTS")
	if dir == "" {
		dir = filepath.Join(os.TempDir(), "wnms-test-artifacts")
	}
	dir = filepath.Join(dir, "console")
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	return dir
}

// screenshot writes the page as dir/name.png, a test artefact.
func screenshot(t *testing.T, ctx context.Context, dir, name string) {
	t.Helper()
	var png []byte
	browse(t, ctx, "screenshot "+name, chromedp.FullScreenshot(&png, 100))
	if err := os.WriteFile(filepath.Join(dir, name+".png"), png, 0o644); err != nil {
		t.Fatal(err)
	}
}

// a11yAudit lists the controls of the page a keyboard cannot reach or that
// have no accessible name.
const a11yAudit = `(() => {
  const bad = [];
  const named = (el) => (el.labels && el.labels.length) || el.getAttribute('aria-label') || el.getAttribute('aria-labelledby') ||
    (el.textContent || '').trim() || el.getAttribute('title');
  for (const el of document.querySelectorAll('a[href], button, input, select, textarea, [tabindex], [role=button]')) {
    if (el.closest('[hidden]') || el.offsetParent === null && el.tagName !== 'rect') continue;
    if (el.tabIndex < 0 && el.id !== 'view') bad.push('not reachable: ' + el.outerHTML.slice(0, 120));
    if (el.id !== 'view' && !named(el)) bad.push('no name: ' + el.outerHTML.slice(0, 120));
  }
  return bad;
})()`

func audit(t *testing.T, ctx context.Context, where string) {
	t.Helper()
	var bad []string
	browse(t, ctx, "audit "+where, chromedp.Evaluate(a11yAudit, &bad))
	if len(bad) > 0 {
		t.Errorf("%s: controls a keyboard user cannot use:\n%s", where, strings.Join(bad, "\n"))
	}
}

// signInKey signs in on the console's form with an API key.
func signInKey(t testing.TB, ctx context.Context, base, keyID, keyValue string) {
	t.Helper()
	browse(t, ctx, "sign in with a key",
		chromedp.Navigate(base+"/"),
		chromedp.WaitVisible(`#view[data-view="login"][data-ready="1"]`, chromedp.ByQuery),
		chromedp.SendKeys(`#login-keyId`, keyID, chromedp.ByQuery),
		chromedp.SendKeys(`#login-keyValue`, keyValue, chromedp.ByQuery),
		chromedp.Click(`#login-key button[type=submit]`, chromedp.ByQuery),
		chromedp.WaitVisible(`#view[data-view="overview"][data-ready="1"]`, chromedp.ByQuery))
}

// checkSparklines checks the overview's trend of each site against the
// API: one fixed scale of 0–100 % (a site's highest slot is drawn at its
// percentage, not at the top), and slots without data drawn as gaps.
func checkSparklines(t *testing.T, ctx context.Context, admin *apitest.Client) {
	t.Helper()
	var drawn []struct {
		Site int64
		Top  float64 // the smallest y of the drawn line (the viewBox is 40 high)
		Gaps int     // shaded runs without data
	}
	browse(t, ctx, "sparklines", chromedp.Evaluate(`[...document.querySelectorAll('.site')].map((c) => {
	  const sp = c.querySelector('svg.spark');
	  const ys = [...sp.querySelectorAll('polyline.obs')].flatMap((l) => l.getAttribute('points').split(' ').map((p) => Number(p.split(',')[1])));
	  return { site: Number(c.dataset.site), top: Math.min(...ys), gaps: sp.querySelectorAll('rect.nodata').length };
	})`, &drawn))
	for _, d := range drawn {
		var slots []struct {
			Observation float64 `json:"observation"`
			Samples     int     `json:"noOfSamplesForObservation"`
		}
		admin.Expect(200, "GET", fmt.Sprintf("/V5/baselines/clientsconnectivity?locationid=%d", d.Site), nil).Decode(t, &slots)
		peak, empty := 0.0, 0
		for _, sl := range slots {
			if sl.Samples == 0 {
				empty++
			} else {
				peak = max(peak, sl.Observation)
			}
		}
		if want := 40 - 1 - peak/100*38; d.Top < want-0.5 || d.Top > want+0.5 {
			t.Errorf("site %d: its highest slot (%.1f %%) is drawn at y %.1f, want %.1f on the 0–100 %% scale", d.Site, peak, d.Top, want)
		}
		if empty > 0 && d.Gaps == 0 {
			t.Errorf("site %d: %d slots without data, and no gap drawn", d.Site, empty)
		}
	}
}

// incident is what the console tests read of GET /V5/incidents.
type incident struct {
	ID             int64  `json:"id"`
	SiteLocationID int64  `json:"siteLocationId"`
	To             *int64 `json:"to"`
	Acknowledged   bool   `json:"acknowledged"`
	Peak           struct {
		AffectedClients   int `json:"affectedClients"`
		AttemptingClients int `json:"attemptingClients"`
	} `json:"peak"`
	Cause *struct {
		Reason struct{ Text string } `json:"reason"`
	} `json:"cause"`
	Scope struct {
		Type, ID, Name string
		Share          float64
	} `json:"scope"`
	Evidence []struct {
		Type, ID, Name string
		Clients        int
	} `json:"evidence"`
}

// affected is the incident's size as the console says it: its scope's
// clients over the scope's share, else (a scope no evidence names, a
// site) its floors' clients summed; never less than its peak.
func (i incident) affected() int {
	floors := 0
	for _, e := range i.Evidence {
		if e.Type == i.Scope.Type && e.ID == i.Scope.ID && i.Scope.Share > 0 {
			return max(i.Peak.AffectedClients, int(float64(e.Clients)/i.Scope.Share+0.5))
		}
		if e.Type == "floor" {
			floors += e.Clients
		}
	}
	return max(floors, i.Peak.AffectedClients)
}

// scopeWords is the incident's scope as the console says it.
func (i incident) scopeWords() string {
	switch i.Scope.Type {
	case "ap":
		return "at AP " + i.Scope.Name
	case "ssid":
		return "on SSID " + i.Scope.Name
	case "band":
		return "on the " + map[string]string{"BAND_2_4_GHZ": "2.4 GHz", "BAND_5_GHZ": "5 GHz"}[i.Scope.ID] + " band"
	case "radiusServer":
		return "of RADIUS server " + i.Scope.Name
	case "floor":
		return "on Sim Site 1 / " + i.Scope.Name
	}
	return "across " + i.Scope.Name
}

// incidents lists the incidents of the last 24 hours at a site.
func incidents(t *testing.T, admin *apitest.Client, site int64) []incident {
	t.Helper()
	var list struct{ Incidents []incident }
	now := time.Now().UnixMilli()
	admin.Expect(200, "GET", fmt.Sprintf("/V5/incidents?locationid=%d&fromtime=%d&totime=%d", site, now-24*3600*1000, now), nil).Decode(t, &list)
	return list.Incidents
}

// checkFirstScreen checks the overview of the demo: Sim Site 1 names its
// RADIUS outage as one incident, in words, with its cause and size;
// Sim Site 2, without incidents or APs down, shows no alarm; every number
// of a site is a link.
func checkFirstScreen(t *testing.T, ctx context.Context, admin *apitest.Client) {
	t.Helper()
	outages := incidents(t, admin, 1)
	if len(outages) != 1 || outages[0].Cause == nil || outages[0].Cause.Reason.Text != "RADIUS server unreachable" {
		t.Fatalf("the demo's incidents at Sim Site 1: %+v", outages)
	}
	out := outages[0]
	var lines []string
	browse(t, ctx, "incident lines", chromedp.Evaluate(`[...document.querySelectorAll('.site[data-site="1"] li[data-incident]')].map((l) => l.textContent)`, &lines))
	want := []string{"RADIUS server unreachable: ", fmt.Sprintf("%d clients %s", out.affected(), out.scopeWords()),
		fmt.Sprintf("peak %d of %d", out.Peak.AffectedClients, out.Peak.AttemptingClients)}
	if len(lines) != 1 {
		t.Errorf("Sim Site 1 shows %d incidents, want the RADIUS outage as one: %q", len(lines), lines)
	} else {
		for _, w := range want {
			if !strings.Contains(lines[0], w) {
				t.Errorf("Sim Site 1's incident says %q, lacking %q", lines[0], w)
			}
		}
	}
	var site2 struct {
		State    string
		Alarms   []string
		Incident int
	}
	browse(t, ctx, "the quiet site", chromedp.Evaluate(`(() => {
	  const c = document.querySelector('.site[data-site="4"]');
	  return { state: c.dataset.state, incident: c.querySelectorAll('li[data-incident]').length,
	    alarms: [...c.querySelectorAll('.bad, .alarm')].filter((e) => e.getClientRects().length).map((e) => e.textContent) };
	})()`, &site2))
	var down struct{ TotalCount int }
	admin.Expect(200, "GET", "/V5/devices/manageddevices?locationid=4&active=false&limit=1", nil).Decode(t, &down)
	if quiet := len(incidents(t, admin, 4)) == 0 && down.TotalCount == 0; quiet && (site2.State == "alarm" || len(site2.Alarms) > 0 || site2.Incident > 0) {
		t.Errorf("Sim Site 2 is quiet, yet shows state %q, alarms %q", site2.State, site2.Alarms)
	}
	// Every number of a site's card is a link to the view that explains it.
	var bare []string
	browse(t, ctx, "numbers are links", chromedp.Evaluate(`(() => {
	  const bare = [];
	  for (const c of document.querySelectorAll('.site')) {
	    const w = document.createTreeWalker(c, NodeFilter.SHOW_TEXT);
	    for (let n = w.nextNode(); n; n = w.nextNode()) {
	      if (n.parentElement.closest('a, h3, .spark-legend, .tz, .chip')) continue;
	      const nums = n.textContent.match(/\b\d+([.,]\d+)?\s*(%|clients)/g);
	      if (nums) bare.push(...nums.map((x) => x + ' in «' + n.textContent.trim() + '»'));
	    }
	  }
	  return bare;
	})()`, &bare))
	for _, b := range bare {
		// targets and shares are settings and parts of a linked number, not measurements
		if !strings.Contains(b, "target") && !strings.Contains(b, "most ") {
			t.Errorf("a number on the first screen is not a link: %s", b)
		}
	}
}

// consoleView is a view's address and its name (#view's data-view).
type consoleView struct{ hash, name string }

// layoutAudit measures the page as shown: how far it runs wider than the
// window, the elements that reach past its right edge, and the visible
// text drawn under 11 px (an SVG's text at the size its scaling draws it).
const layoutAudit = `(() => {
  const de = document.documentElement, small = [];
  const w = document.createTreeWalker(document.body, NodeFilter.SHOW_TEXT);
  for (let n = w.nextNode(); n; n = w.nextNode()) {
    const el = n.parentElement;
    if (!n.textContent.trim() || !el || !el.getClientRects().length) continue;
    const r = document.createRange();
    r.selectNodeContents(n);
    if (!r.getClientRects().length) continue;
    let size = parseFloat(getComputedStyle(el).fontSize);
    if (el instanceof SVGElement) { const m = el.getScreenCTM(); if (m) size *= Math.hypot(m.a, m.b); }
    if (size < 11) small.push(size.toFixed(1) + ' px: ' + n.textContent.trim().slice(0, 40));
  }
  const wide = [...document.querySelectorAll('body *')].filter((e) => e.getBoundingClientRect().right > de.clientWidth + 1)
    .slice(0, 5).map((e) => e.tagName + '.' + e.className + ': ' + (e.textContent || '').trim().slice(0, 40));
  return { overflow: de.scrollWidth - de.clientWidth, wide, small: small.slice(0, 20) };
})()`

// checkLayout opens the first screen and the incidents view at a desktop's
// and a phone's width: no horizontal overflow, no text under 11 px; each
// kept as a screenshot.
func checkLayout(t *testing.T, ctx context.Context, shots, who string, more ...consoleView) {
	t.Helper()
	views := append([]consoleView{{"#/", "overview"}, {"#/incidents", "incidents"}, {"#/servicelevels/1", "servicelevels"},
		{"#/aps/1", "aps"}, {"#/clients", "clients"}, {"#/baselines", "baselines"}, {"#/floor", "floor"},
		{"#/network", "network"}, {"#/settings", "settings"}}, more...)
	for _, width := range []int64{1400, 390} {
		for _, v := range views {
			t.Run(fmt.Sprintf("%s at %d px", v.name, width), func(t *testing.T) {
				browse(t, ctx, "width", chromedp.EmulateViewport(width, 900))
				view(t, ctx, v.hash, v.name)
				var got struct {
					Overflow    float64
					Wide, Small []string
				}
				browse(t, ctx, "layout", chromedp.Evaluate(layoutAudit, &got))
				if got.Overflow > 0 {
					t.Errorf("%d px too wide for the window; past its edge: %q", int(got.Overflow), got.Wide)
				}
				if len(got.Small) > 0 {
					t.Errorf("text under 11 px:\n%s", strings.Join(got.Small, "\n"))
				}
				screenshot(t, ctx, shots, fmt.Sprintf("%s%s-%d", who, v.name, width))
			})
		}
	}
	browse(t, ctx, "width", chromedp.EmulateViewport(1280, 1000))
}

// signInPassword signs in on the console's form as a LOCAL user.
func signInPassword(t testing.TB, ctx context.Context, base, login, password string) {
	t.Helper()
	browse(t, ctx, "sign in with a password",
		chromedp.Navigate(base+"/"),
		chromedp.WaitVisible(`#view[data-view="login"][data-ready="1"]`, chromedp.ByQuery),
		chromedp.SendKeys(`#login-username`, login, chromedp.ByQuery),
		chromedp.SendKeys(`#login-password`, password, chromedp.ByQuery),
		chromedp.Click(`#login-user button[type=submit]`, chromedp.ByQuery),
		chromedp.WaitVisible(`#view[data-view="overview"][data-ready="1"]`, chromedp.ByQuery))
}

// testConsole drives the console in Chromium against the demo server at
// base (filled by the simulator, with its RADIUS outage of a working
// day's afternoon at the sites).
func testConsole(t *testing.T, base string, keyID, keyValue string) {
	b := startBrowser(t)
	shots := screenshotDir(t)
	t.Logf("console screenshots in %s", shots)
	admin := apitest.Remote(t, base, keyID, keyValue)
	// The outage's incident: the grouping runs every minute, a margin
	// behind the anomalies' evaluation, so a demo just started may not
	// hold it yet.
	for deadline := time.Now().Add(6 * time.Minute); ; time.Sleep(2 * time.Second) {
		list := incidents(t, admin, 1)
		if slices.ContainsFunc(list, func(i incident) bool { return i.Cause != nil && i.Cause.Reason.Text == "RADIUS server unreachable" }) {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("the demo's RADIUS outage is no incident after 6 minutes: %+v", list)
		}
	}

	// The outage's slots: anomalous at a floor of Sim Site 1, with
	// clients that failed on RADIUS.
	var anomalies []struct {
		LocationID struct{ ID int64 } `json:"locationId"`
		Timestamp  int64              `json:"timestamp"`
	}
	admin.Expect(200, "GET", "/V5/baselines/anomalies", nil).Decode(t, &anomalies)
	if len(anomalies) == 0 {
		t.Fatal("the demo has no anomalies to show")
	}
	// The outage's slots are the oldest that hold clients failing on
	// authentication; the demo's quiet hours can hold other anomalies too
	// (one client of a few failing its association is one today).
	var victim string
	outage := anomalies[0]
	for i := len(anomalies) - 1; i >= 0 && victim == ""; i-- {
		a := anomalies[i]
		var failing struct {
			Clients []struct {
				MacAddress        string   `json:"macAddress"`
				FailureCategories []string `json:"failureCategories"`
			} `json:"clients"`
		}
		admin.Expect(200, "GET", fmt.Sprintf("/V5/baselines/clientsconnectivity/failingclients?locationid=%d&timestamp=%d",
			a.LocationID.ID, a.Timestamp), nil).Decode(t, &failing)
		for _, c := range failing.Clients {
			if slices.Contains(c.FailureCategories, "Authentication") {
				victim, outage = c.MacAddress, a
				break
			}
		}
	}
	if victim == "" {
		t.Fatalf("no anomaly of the demo holds a client failing on authentication: %+v", anomalies)
	}

	ctx := b.page()
	t.Run("administrator by key", func(t *testing.T) {
		// The sign-in page shows no navigation and no "Sign out".
		var shown []string
		browse(t, ctx, "the sign-in page",
			chromedp.Navigate(base+"/"),
			chromedp.WaitVisible(`#view[data-view="login"][data-ready="1"]`, chromedp.ByQuery),
			chromedp.Evaluate(`[...document.querySelectorAll('header, header nav a, #signout')].filter((e) => e.getClientRects().length > 0).map((e) => e.textContent.trim() || e.tagName)`, &shown))
		if len(shown) > 0 {
			t.Errorf("the sign-in page shows the navigation: %q", shown)
		}
		signInKey(t, ctx, base, keyID, keyValue)
		if n := count(t, ctx, `.site`); n != 2 {
			t.Errorf("overview: %d sites, want 2", n)
		}
		if s := text(t, ctx); !strings.Contains(s, "Sim Site 1") || !strings.Contains(s, "APs up") ||
			!strings.Contains(s, "clients connected") || !strings.Contains(s, "clients failing") {
			t.Errorf("overview:\n%s", s)
		}
		checkSparklines(t, ctx, admin)
		checkFirstScreen(t, ctx, admin)
		audit(t, ctx, "overview")
		screenshot(t, ctx, shots, "overview")

		view(t, ctx, "#/aps/1", "aps")
		if s := text(t, ctx); !strings.Contains(s, "S1-F1-AP1") || strings.Contains(s, "S2-F1-AP1") || !strings.Contains(s, "Up") {
			t.Errorf("APs of Sim Site 1:\n%s", s)
		}
		// Sorting by name the other way round puts AP6 first.
		browse(t, ctx, "sort", chromedp.Click(`th[aria-sort] button`, chromedp.ByQuery),
			chromedp.WaitVisible(`th[aria-sort="descending"]`, chromedp.ByQuery))
		var first string
		browse(t, ctx, "first AP", chromedp.Text(`#view tbody tr td`, &first, chromedp.ByQuery))
		if !strings.Contains(first, "AP6") {
			t.Errorf("sorted descending, the first AP is %q", first)
		}
		audit(t, ctx, "APs")
		screenshot(t, ctx, shots, "aps")

		view(t, ctx, "#/clients/laptop-0010", "clients")
		if s := text(t, ctx); !strings.Contains(s, "laptop-0010") || strings.Contains(s, "laptop-0011") {
			t.Errorf("searching laptop-0010:\n%s", s)
		}
		audit(t, ctx, "clients")
		screenshot(t, ctx, shots, "clients")

		view(t, ctx, "#/client/"+victim, "client")
		s := text(t, ctx)
		if !strings.Contains(s, "Authentication: RADIUS server unreachable") || count(t, ctx, `.timeline li.failure`) == 0 {
			t.Errorf("the timeline of %s does not show its RADIUS failure:\n%s", victim, s)
		}
		// The timeline is connection attempts, not every step: the
		// outage's failures in a row are one row, an attempt's steps one
		// click away.
		if !strings.Contains(s, "failed attempts") || count(t, ctx, `ol.timeline > li details`) == 0 {
			t.Errorf("the timeline of %s does not group its attempts:\n%s", victim, s)
		}
		for _, want := range []string{"Data rate (Mbps)", "RSSI (dBm)", "Retries (%)", "APs that hear it", "Connection logs", "Connected ("} {
			if !strings.Contains(s, want) {
				t.Errorf("client page lacks %q", want)
			}
		}
		if n := count(t, ctx, `svg.chart polyline.obs`); n < 3 {
			t.Errorf("client page: %d charts with data", n)
		}
		audit(t, ctx, "client")
		screenshot(t, ctx, shots, "client")

		// The outage on the baselines chart: anomalies marked, and the
		// slot's failing clients listed on click.
		view(t, ctx, fmt.Sprintf("#/baselines/%d", outage.LocationID.ID), "baselines")
		if n := count(t, ctx, `svg.chart circle.anom`); n == 0 {
			t.Error("no anomaly marked on the baselines chart")
		}
		browse(t, ctx, "pick the outage's slot",
			chromedp.Click(fmt.Sprintf(`rect.slot[data-t="%d"]`, outage.Timestamp), chromedp.ByQuery),
			chromedp.WaitVisible(`#slot-clients table`, chromedp.ByQuery))
		var listed string
		browse(t, ctx, "slot clients", chromedp.Text(`#slot-clients`, &listed, chromedp.ByQuery))
		if !strings.Contains(listed, victim) || !strings.Contains(listed, "Authentication") {
			t.Errorf("the outage's slot lists:\n%s", listed)
		}
		// The keyboard picks a slot too.
		browse(t, ctx, "keyboard", chromedp.Focus(`rect.slot`, chromedp.ByQuery), chromedp.KeyEvent("\r"),
			chromedp.WaitVisible(`rect.slot.picked`, chromedp.ByQuery))
		audit(t, ctx, "baselines")
		screenshot(t, ctx, shots, "baselines")

		view(t, ctx, fmt.Sprintf("#/floor/%d", outage.LocationID.ID), "floor")
		if n := count(t, ctx, `svg.plan rect.obstacle`); n < 5 {
			t.Errorf("floor plan: %d obstacles drawn, want the demo's 5", n)
		}
		if n := count(t, ctx, `svg.plan g.ap`); n != 6 {
			t.Errorf("floor plan: %d APs placed, want the floor's 6", n)
		}
		if s := text(t, ctx); !strings.Contains(s, "AP1") {
			t.Errorf("floor plan lists no APs:\n%s", s)
		}
		audit(t, ctx, "floor")
		screenshot(t, ctx, shots, "floor")

		// The incidents view: the outage as one row, with its cause,
		// scope, evidence and state, and Acknowledge for an administrator.
		view(t, ctx, "#/incidents/site/1", "incidents")
		if n := count(t, ctx, `article.incident`); n != 1 {
			t.Errorf("incidents of Sim Site 1: %d rows, want the outage as one", n)
		}
		if s := text(t, ctx); !strings.Contains(s, "RADIUS server unreachable, failing at authentication") ||
			!strings.Contains(s, "Scope: "+incidents(t, admin, 1)[0].scopeWords()) || !strings.Contains(s, "RADIUS servers: 10.0.0.") || !strings.Contains(s, "Floors: Floor ") {
			t.Errorf("incidents:\n%s", s)
		}
		if acked := incidents(t, admin, 1)[0].Acknowledged; !acked && count(t, ctx, `article.incident button.ack`) != 1 {
			t.Error("an administrator is offered no Acknowledge")
		}
		audit(t, ctx, "incidents")
		screenshot(t, ctx, shots, "incidents")
		// The old address of the anomaly list opens the incidents.
		view(t, ctx, "#/anomalies", "anomalies")
		if n := count(t, ctx, `article.incident`); n == 0 {
			t.Error("#/anomalies shows no incidents")
		}

		view(t, ctx, "#/settings", "settings")
		if n := count(t, ctx, `#view .edit`); n == 0 {
			t.Error("an administrator sees no edit control in the settings")
		}
		// The SNMP policy as a form: a trap receiver added, saved, read
		// back through the API, then removed again.
		type snmpPolicy struct {
			SNMPIntegrationEnabled bool `json:"snmpIntegrationEnabled"`
			SNMPServerList         []struct {
				DestIPAddress   string `json:"destIpAddress"`
				TrapPort        int    `json:"trapPort"`
				ProtocolVersion string `json:"protocolVersion"`
			} `json:"snmpServerlist"`
		}
		var was snmpPolicy
		admin.Expect(200, "GET", "/V5/configuration/global/snmp", nil).Decode(t, &was)
		n := len(was.SNMPServerList)
		browse(t, ctx, "add a trap receiver",
			chromedp.Click(`#snmp-snmpServerlist-add`, chromedp.ByQuery),
			chromedp.WaitVisible(fmt.Sprintf(`#snmp-snmpServerlist-%d-destIpAddress`, n), chromedp.ByQuery),
			chromedp.SendKeys(fmt.Sprintf(`#snmp-snmpServerlist-%d-destIpAddress`, n), "192.0.2.162", chromedp.ByQuery),
			chromedp.SetValue(fmt.Sprintf(`#snmp-snmpServerlist-%d-protocolVersion`, n), "V1", chromedp.ByQuery),
			chromedp.Click(`#snmp-save`, chromedp.ByQuery),
			chromedp.WaitVisible(`//p[@id="snmp-msg"][text()="Saved."]`, chromedp.BySearch))
		var is snmpPolicy
		admin.Expect(200, "GET", "/V5/configuration/global/snmp", nil).Decode(t, &is)
		if len(is.SNMPServerList) != n+1 || is.SNMPServerList[n].DestIPAddress != "192.0.2.162" || is.SNMPServerList[n].TrapPort != 162 ||
			is.SNMPServerList[n].ProtocolVersion != "V1" || is.SNMPIntegrationEnabled != was.SNMPIntegrationEnabled {
			t.Errorf("the SNMP policy after the form's save: %+v (before %+v)", is, was)
		}
		// A bad address is refused by the server, said, and changes nothing.
		browse(t, ctx, "a bad trap receiver",
			chromedp.SetValue(fmt.Sprintf(`#snmp-snmpServerlist-%d-trapPort`, n), "70000", chromedp.ByQuery),
			chromedp.Click(`#snmp-save`, chromedp.ByQuery),
			chromedp.WaitVisible(`//p[@id="snmp-msg"][starts-with(., "Not saved:")]`, chromedp.BySearch))
		var still snmpPolicy
		admin.Expect(200, "GET", "/V5/configuration/global/snmp", nil).Decode(t, &still)
		if len(still.SNMPServerList) != n+1 || still.SNMPServerList[n].TrapPort != 162 {
			t.Errorf("a refused save changed the SNMP policy: %+v", still)
		}
		browse(t, ctx, "remove the trap receiver",
			chromedp.Click(fmt.Sprintf(`//fieldset[@id="snmp-snmpServerlist"]//fieldset[.//input[@id="snmp-snmpServerlist-%d-destIpAddress"]]/button[text()="Remove"]`, n), chromedp.BySearch),
			chromedp.Click(`#snmp-save`, chromedp.ByQuery),
			chromedp.WaitVisible(`//p[@id="snmp-msg"][text()="Saved."]`, chromedp.BySearch))
		admin.Expect(200, "GET", "/V5/configuration/global/snmp", nil).Decode(t, &is)
		if len(is.SNMPServerList) != n {
			t.Errorf("the trap receiver removed in the form is still there: %+v", is)
		}
		// Hotspot SSIDs, one a line.
		var hs struct{ SSIDs []string }
		browse(t, ctx, "hotspot SSIDs",
			chromedp.SetValue(`#hotspot-ssids`, "Guest\nCafe Free Wi-Fi\n", chromedp.ByQuery),
			chromedp.Click(`#hotspot-save`, chromedp.ByQuery),
			chromedp.WaitVisible(`//p[@id="hotspot-msg"][text()="Saved."]`, chromedp.BySearch))
		admin.Expect(200, "GET", "/V5/configuration/global/hotspotssid", nil).Decode(t, &hs)
		if !slices.Equal(hs.SSIDs, []string{"Guest", "Cafe Free Wi-Fi"}) {
			t.Errorf("the hotspot SSIDs saved from the form: %q", hs.SSIDs)
		}
		admin.Expect(200, "PUT", "/V5/configuration/global/hotspotssid", map[string]any{"policyType": "HOTSPOT_SSID_POLICY",
			"policyCreatedAtLocId": map[string]any{"type": "locallocationid", "id": 0}, "ssids": []string{}})
		if s := text(t, ctx); !strings.Contains(s, "demo-simulator") || !strings.Contains(s, "API keys") {
			t.Errorf("settings:\n%s", s)
		}
		// An administrator adds an API user and makes it a key, which
		// works; the user is removed again.
		apiUser := fmt.Sprintf("api-%d", time.Now().UnixNano()%1e9)
		browse(t, ctx, "add a user",
			chromedp.SendKeys(`#new-user-login`, apiUser, chromedp.ByQuery),
			chromedp.SetValue(`#new-user-type`, "API", chromedp.ByQuery),
			chromedp.Click(`//button[text()="Add user"]`, chromedp.BySearch),
			chromedp.WaitVisible(fmt.Sprintf(`//tr[td[1][text()=%q]]//button[text()="New API key"]`, apiUser), chromedp.BySearch),
			chromedp.Click(fmt.Sprintf(`//tr[td[1][text()=%q]]//button[text()="New API key"]`, apiUser), chromedp.BySearch),
			chromedp.WaitVisible(`#new-key-value`, chromedp.ByQuery))
		var shownKey string
		browse(t, ctx, "read the key", chromedp.Text(`#view [role=status] p`, &shownKey, chromedp.ByQuery))
		parts := strings.Fields(strings.NewReplacer(",", " ").Replace(shownKey))
		if len(parts) < 4 {
			t.Fatalf("the new key: %q", shownKey)
		}
		keyClient := apitest.Remote(t, base, parts[len(parts)-4], parts[len(parts)-1])
		var madeUser struct{ UserID int64 }
		keyClient.Expect(200, "GET", "/V5/users/current", nil).Decode(t, &madeUser)
		// The administrator changes the user's role and locations, then
		// locks and unlocks it, each read back through the API.
		userNow := func() (u struct {
			Role             string
			UserLockedState  string
			AllowedLocations []struct{ ID int64 }
		}) {
			var all []json.RawMessage
			admin.Expect(200, "GET", "/V5/users", nil).Decode(t, &all)
			for _, raw := range all {
				var x struct{ UserID int64 }
				json.Unmarshal(raw, &x)
				if x.UserID == madeUser.UserID {
					json.Unmarshal(raw, &u)
				}
			}
			return u
		}
		row := fmt.Sprintf(`//tr[td[1][text()=%q]]`, apiUser)
		browse(t, ctx, "change the user",
			chromedp.Click(row+`//button[text()="Change"]`, chromedp.BySearch),
			chromedp.WaitVisible(`#edit-user-role`, chromedp.ByQuery),
			chromedp.SetValue(`#edit-user-role`, "OPERATOR", chromedp.ByQuery),
			chromedp.Evaluate(`(() => { const s = document.querySelector('#edit-user-locations');
				for (const o of s.options) o.selected = o.textContent === 'Sim Site 1'; return true; })()`, nil),
			chromedp.Click(`//section[@aria-labelledby="edit-user-title"]//button[text()="Save"]`, chromedp.BySearch),
			chromedp.WaitVisible(fmt.Sprintf(`//p[text()=%q]`, "Changed "+apiUser+"."), chromedp.BySearch))
		if u := userNow(); u.Role != "OPERATOR" || len(u.AllowedLocations) != 1 || u.AllowedLocations[0].ID != 1 {
			t.Errorf("after the change the user is %+v, want an OPERATOR at Sim Site 1 (1)", u)
		}
		browse(t, ctx, "lock the user",
			chromedp.Click(`#edit-user-lock`, chromedp.ByQuery),
			chromedp.WaitVisible(`//button[@id="edit-user-lock"][text()="Unlock"]`, chromedp.BySearch))
		if u := userNow(); u.UserLockedState != "USER_LOCKED" {
			t.Errorf("after Lock the user is %q", u.UserLockedState)
		}
		browse(t, ctx, "unlock the user",
			chromedp.Click(`#edit-user-lock`, chromedp.ByQuery),
			chromedp.WaitVisible(`//button[@id="edit-user-lock"][text()="Lock"]`, chromedp.BySearch))
		if u := userNow(); u.UserLockedState == "USER_LOCKED" {
			t.Errorf("after Unlock the user is %q", u.UserLockedState)
		}
		admin.Expect(204, "DELETE", fmt.Sprintf("/V5/users/%d", madeUser.UserID), nil)
		// A profile made from its form, read back, changed, then deleted
		// (asked twice).
		profile := fmt.Sprintf("Lobby %d", time.Now().UnixNano()%1e9)
		browse(t, ctx, "create a profile",
			chromedp.SendKeys(`#profile-templateName`, profile, chromedp.ByQuery),
			chromedp.SendKeys(`#profile-ssid`, "corp", chromedp.ByQuery),
			chromedp.SendKeys(`#profile-passphrase`, "lobby-psk-secret", chromedp.ByQuery),
			chromedp.SetValue(`#profile-pingDestinationServers`, "8.8.8.8\nexample.net", chromedp.ByQuery),
			chromedp.SetValue(`#profile-location`, "1", chromedp.ByQuery),
			chromedp.Click(`#profile-save`, chromedp.ByQuery),
			chromedp.WaitVisible(fmt.Sprintf(`//tr[td[1][text()=%q]]`, profile), chromedp.BySearch))
		type testProfile struct {
			TemplateID             int64
			TemplateName           string
			SSID                   string
			FrequencyBand          string
			SecurityMode           int
			Passphrase             *string
			PingDestinationServers []string
			CreatedAtLocationID    struct{ ID int64 }
		}
		readProfile := func() (p testProfile) {
			var list []testProfile
			admin.Expect(200, "GET", "/V5/templates/CL_CONN_TEST_PROFILE?locationid=1&minimalinforequired=false", nil).Decode(t, &list)
			for _, x := range list {
				if x.TemplateName == profile {
					p = x
				}
			}
			return p
		}
		if p := readProfile(); p.SSID != "corp" || p.FrequencyBand != "BAND_5_GHZ" || p.SecurityMode != 3 || p.Passphrase == nil ||
			*p.Passphrase != wnms.SecretMask || !slices.Equal(p.PingDestinationServers, []string{"8.8.8.8", "example.net"}) || p.CreatedAtLocationID.ID != 1 {
			t.Errorf("the profile created from the form: %+v", p)
		}
		browse(t, ctx, "change the profile",
			chromedp.Click(fmt.Sprintf(`//tr[td[1][text()=%q]]//button[text()="Change"]`, profile), chromedp.BySearch),
			chromedp.WaitVisible(`//button[@id="profile-save"][text()="Save profile"]`, chromedp.BySearch),
			chromedp.SetValue(`#profile-ssid`, "corp-5g", chromedp.ByQuery),
			chromedp.Click(`#profile-save`, chromedp.ByQuery),
			chromedp.WaitVisible(fmt.Sprintf(`//p[@id="profile-msg"][text()=%q]`, "Changed "+profile+"."), chromedp.BySearch))
		if p := readProfile(); p.SSID != "corp-5g" || p.Passphrase == nil || *p.Passphrase != wnms.SecretMask {
			t.Errorf("the profile after its change: %+v", p)
		}
		browse(t, ctx, "delete the profile",
			chromedp.Click(fmt.Sprintf(`//tr[td[1][text()=%q]]//button[text()="Delete"]`, profile), chromedp.BySearch),
			chromedp.Click(fmt.Sprintf(`//tr[td[1][text()=%q]]//button[text()="Confirm: delete"]`, profile), chromedp.BySearch),
			chromedp.WaitNotPresent(fmt.Sprintf(`//tr[td[1][text()=%q]]`, profile), chromedp.BySearch))
		// A poller added from the form (to an AP that is not there): listed
		// with its state, its password kept and never shown, then removed.
		poller := fmt.Sprintf("lab-ap-%d", time.Now().UnixNano()%1e9)
		prow := fmt.Sprintf(`//table[@aria-label="Pollers"]//tr[td[1][text()=%q]]`, poller)
		browse(t, ctx, "add a poller",
			chromedp.SendKeys(`#poller-name`, poller, chromedp.ByQuery),
			chromedp.SendKeys(`#poller-url`, "http://127.0.0.1:9/ubus", chromedp.ByQuery),
			chromedp.SendKeys(`#poller-username`, "wnms", chromedp.ByQuery),
			chromedp.SendKeys(`#poller-password`, "rpcd-secret-console", chromedp.ByQuery),
			chromedp.Click(`//button[text()="Add poller"]`, chromedp.BySearch),
			chromedp.WaitVisible(prow, chromedp.BySearch))
		var ds struct {
			Pollers []struct{ Name, Kind, URL, Username, Password string }
		}
		admin.Expect(200, "GET", "/V5/datasources", nil).Decode(t, &ds)
		if i := slices.IndexFunc(ds.Pollers, func(p struct{ Name, Kind, URL, Username, Password string }) bool { return p.Name == poller }); i < 0 ||
			ds.Pollers[i].Kind != "ubus" || ds.Pollers[i].Password != wnms.SecretMask || ds.Pollers[i].URL != "http://127.0.0.1:9/ubus" {
			t.Errorf("the poller added from the console: %+v", ds.Pollers)
		}
		if s := text(t, ctx); strings.Contains(s, "rpcd-secret-console") {
			t.Error("the settings show a poller's password")
		}
		screenshot(t, ctx, shots, "settings-pollers")
		browse(t, ctx, "remove the poller",
			chromedp.Click(prow+`//button[text()="Remove"]`, chromedp.BySearch),
			chromedp.Click(prow+`//button[text()="Confirm: remove"]`, chromedp.BySearch),
			chromedp.WaitNotPresent(prow, chromedp.BySearch))
		audit(t, ctx, "settings")
		screenshot(t, ctx, shots, "settings")

		// An AP's page: its radios, its clients and its client count; the
		// AP view links to it.
		var aps struct {
			ManagedDevices []struct {
				Macaddress string
				Radios     []json.RawMessage
			}
		}
		admin.Expect(200, "GET", "/V5/devices/manageddevices?locationid=1&limit=1&sortby=devicename", nil).Decode(t, &aps)
		if len(aps.ManagedDevices) == 0 {
			t.Fatal("the demo has no AP at Sim Site 1")
		}
		ap := aps.ManagedDevices[0]
		view(t, ctx, "#/aps/1", "aps")
		browse(t, ctx, "open an AP", chromedp.Click(fmt.Sprintf(`//table[@aria-label="APs"]//a[@href=%q]`, "#/ap/"+strings.ReplaceAll(ap.Macaddress, ":", "%3A")), chromedp.BySearch),
			chromedp.WaitVisible(`#view[data-view="ap"][data-ready="1"]`, chromedp.ByQuery))
		if n := count(t, ctx, `table[aria-label="Radios"] tbody tr`); n != len(ap.Radios) || n == 0 {
			t.Errorf("the AP page lists %d radios, the API %d", n, len(ap.Radios))
		}
		if s := text(t, ctx); !strings.Contains(s, "Clients on this AP now") || !strings.Contains(s, ap.Macaddress) || count(t, ctx, `#view svg`) == 0 {
			t.Errorf("the AP page:\n%s", s)
		}
		audit(t, ctx, "ap")

		checkLayout(t, ctx, shots, "", consoleView{"#/client/" + victim, "client"}, consoleView{"#/ap/" + ap.Macaddress, "ap"})

		// Live: a site created elsewhere is in the tree without a reload
		// (the event stream's configChanged); it is removed again, as the
		// demo keeps only its own locations.
		view(t, ctx, "#/aps/0", "aps")
		var made struct {
			ID struct{ ID int64 } `json:"id"`
		}
		admin.Expect(200, "PUT", "/V5/locations", map[string]any{"parentLocation": map[string]any{"type": "locallocationid", "id": 0},
			"location": map[string]any{"type": "folderlocation", "name": "AAA live site"}}).Decode(t, &made)
		browse(t, ctx, "live site", chromedp.WaitVisible(`//nav[@aria-label="Locations"]//a[text()="AAA live site"]`, chromedp.BySearch))
		admin.Expect(204, "DELETE", fmt.Sprintf("/V5/locations/%d", made.ID.ID), nil)
	})

	// A VIEWER scoped to Sim Site 1, signing in with login and password:
	// no edit control anywhere, and nothing of Sim Site 2.
	viewer := fmt.Sprintf("viewer-%d", time.Now().UnixNano()%1e9)
	var vu struct{ UserID int64 }
	admin.Expect(200, "PUT", "/V5/users", map[string]any{"user": map[string]any{"loginId": viewer, "role": "VIEWER",
		"userType": "LOCAL", "allowedLocations": []any{map[string]any{"type": "locallocationid", "id": 1}}}, "password": "viewer-pass-1"}).Decode(t, &vu)
	defer admin.Expect(204, "DELETE", fmt.Sprintf("/V5/users/%d", vu.UserID), nil)
	vctx := b.page()
	t.Run("scoped viewer by password", func(t *testing.T) {
		signInPassword(t, vctx, base, viewer, "viewer-pass-1")
		for _, v := range []struct{ hash, name string }{
			{"#/", "overview"}, {"#/aps", "aps"}, {"#/clients", "clients"}, {"#/baselines", "baselines"},
			{"#/floor", "floor"}, {"#/incidents", "incidents"}, {"#/settings", "settings"},
		} {
			view(t, vctx, v.hash, v.name)
			var all string
			browse(t, vctx, "page text", chromedp.Evaluate(`document.body.innerText + [...document.querySelectorAll('option')].map(o => o.textContent).join(' ')`, &all))
			if strings.Contains(all, "Sim Site 2") || strings.Contains(all, "S2-F") {
				t.Errorf("%s: the viewer of Sim Site 1 sees Sim Site 2", v.name)
			}
			if n := count(t, vctx, `#view .edit, #view button.primary:not([type=submit])`); n != 0 {
				t.Errorf("%s: a VIEWER sees %d edit controls", v.name, n)
			}
			audit(t, vctx, "viewer "+v.name)
			screenshot(t, vctx, shots, "viewer-"+v.name)
		}
		var ro bool
		browse(t, vctx, "read-only", chromedp.Evaluate(`document.querySelector('#snmp-snmpSettings-versionOneTwoSettings-communityString').readOnly &&
			document.querySelector('#snmp-snmpIntegrationEnabled').disabled && !document.querySelector('#snmp-save')`, &ro))
		if !ro {
			t.Error("the viewer's SNMP settings are editable")
		}
		if n := count(t, vctx, `.site`); n != 0 {
			// (the settings view is open; overview checked below)
			_ = n
		}
		view(t, vctx, "#/", "overview")
		if n := count(t, vctx, `.site`); n != 1 {
			t.Errorf("the viewer's overview shows %d sites, want Sim Site 1 alone", n)
		}
		// AP status, through the extension every role may call: the
		// overview counts the APs, and the AP view lists them without
		// their IP addresses and models.
		if s := text(t, vctx); !strings.Contains(s, "APs up") || !strings.Contains(s, "APs down") {
			t.Errorf("the viewer's overview has no AP status:\n%s", s)
		}
		view(t, vctx, "#/aps/1", "aps")
		if n := count(t, vctx, `table[aria-label="APs"] tbody tr td:nth-child(2) span`); n == 0 {
			t.Errorf("the viewer's AP view lists no AP status:\n%s", text(t, vctx))
		}
		// A VIEWER's AP page: the status, no radios.
		browse(t, vctx, "open an AP", chromedp.Click(`table[aria-label="APs"] tbody tr a`, chromedp.ByQuery),
			chromedp.WaitVisible(`#view[data-view="ap"][data-ready="1"]`, chromedp.ByQuery))
		if s := text(t, vctx); !strings.Contains(s, "Clients on this AP now") || strings.Contains(s, "Radios") || strings.Contains(s, "Software") {
			t.Errorf("the viewer's AP page:\n%s", s)
		}
		view(t, vctx, "#/aps/1", "aps")
		var heads []string
		browse(t, vctx, "AP columns", chromedp.Evaluate(`[...document.querySelectorAll('table[aria-label="APs"] th')].map((th) => th.textContent.trim())`, &heads))
		if slices.Contains(heads, "IP") || slices.Contains(heads, "Model") {
			t.Errorf("the viewer's AP table shows %q", heads)
		}
		// The outage is listed, and a VIEWER is offered no Acknowledge.
		view(t, vctx, "#/incidents/site/1", "incidents")
		if n := count(t, vctx, `article.incident`); n != 1 {
			t.Errorf("the viewer sees %d incidents at Sim Site 1, want 1", n)
		}
		if n := count(t, vctx, `button.ack`); n != 0 {
			t.Errorf("a VIEWER is offered Acknowledge %d times", n)
		}
		checkLayout(t, vctx, shots, "viewer-")
	})

	// An OPERATOR acknowledges the outage from the incidents view; the API
	// says so afterwards.
	operator := fmt.Sprintf("operator-%d", time.Now().UnixNano()%1e9)
	var ou struct{ UserID int64 }
	admin.Expect(200, "PUT", "/V5/users", map[string]any{"user": map[string]any{"loginId": operator, "role": "OPERATOR",
		"userType": "LOCAL", "allowedLocations": []any{map[string]any{"type": "locallocationid", "id": 1}}}, "password": "operator-pass-1"}).Decode(t, &ou)
	defer admin.Expect(204, "DELETE", fmt.Sprintf("/V5/users/%d", ou.UserID), nil)
	octx := b.page()
	t.Run("operator acknowledges", func(t *testing.T) {
		signInPassword(t, octx, base, operator, "operator-pass-1")
		out := incidents(t, admin, 1)[0]
		view(t, octx, fmt.Sprintf("#/incidents/%d", out.ID), "incidents")
		if out.Acknowledged {
			// (a server the test ran against before: already acknowledged)
			if n := count(t, octx, `button.ack`); n != 0 {
				t.Errorf("an acknowledged incident offers Acknowledge %d times", n)
			}
			return
		}
		sel := fmt.Sprintf(`article[data-incident="%d"]`, out.ID)
		browse(t, octx, "acknowledge", chromedp.Click(sel+` button.ack`, chromedp.ByQuery),
			chromedp.WaitVisible(sel+` .ack-msg`, chromedp.ByQuery),
			chromedp.Poll(fmt.Sprintf(`document.querySelector('%s .ack-msg').textContent === 'Acknowledged.'`, sel), nil, chromedp.WithPollingTimeout(20*time.Second)))
		if s := text(t, octx); !strings.Contains(s, "acknowledged") || count(t, octx, sel+` button.ack`) != 0 {
			t.Errorf("after Acknowledge:\n%s", s)
		}
		if !incidents(t, admin, 1)[0].Acknowledged {
			t.Error("the API does not say the incident is acknowledged")
		}
		screenshot(t, octx, shots, "operator-acknowledged")
		checkLayout(t, octx, shots, "operator-")
	})

	// An ADMINISTRATOR of one site: every view fits, with the forms an
	// administrator gets, and nothing of the other site shows.
	siteAdmin := fmt.Sprintf("siteadmin-%d", time.Now().UnixNano()%1e9)
	var su struct{ UserID int64 }
	admin.Expect(200, "PUT", "/V5/users", map[string]any{"user": map[string]any{"loginId": siteAdmin, "role": "ADMINISTRATOR",
		"userType": "LOCAL", "allowedLocations": []any{map[string]any{"type": "locallocationid", "id": 1}}}, "password": "siteadmin-pass-1"}).Decode(t, &su)
	defer admin.Expect(204, "DELETE", fmt.Sprintf("/V5/users/%d", su.UserID), nil)
	sctx := b.page()
	t.Run("site administrator", func(t *testing.T) {
		signInPassword(t, sctx, base, siteAdmin, "siteadmin-pass-1")
		for _, v := range []consoleView{{"#/", "overview"}, {"#/network", "network"}, {"#/settings", "settings"}} {
			view(t, sctx, v.hash, v.name)
			var all string
			browse(t, sctx, "page text", chromedp.Evaluate(`document.body.innerText + [...document.querySelectorAll('option')].map(o => o.textContent).join(' ')`, &all))
			if strings.Contains(all, "Sim Site 2") {
				t.Errorf("%s: the administrator of Sim Site 1 sees Sim Site 2", v.name)
			}
			if v.name == "settings" && count(t, sctx, `#view .edit`) == 0 {
				t.Error("the site administrator sees no edit control in the settings")
			}
		}
		checkLayout(t, sctx, shots, "siteadmin-")
	})

	// Sign-out ends the session on the server, not only in the page.
	t.Run("sign-out", func(t *testing.T) {
		var cookies []*network.Cookie
		browse(t, ctx, "cookies", chromedp.ActionFunc(func(ctx context.Context) error {
			var err error
			cookies, err = network.GetCookies().WithURLs([]string{base + "/"}).Do(ctx)
			return err
		}))
		var session string
		for _, c := range cookies {
			if c.Name == "JSESSIONID" {
				session = c.Value
				if !c.HTTPOnly || c.SameSite != network.CookieSameSiteStrict {
					t.Errorf("session cookie: HttpOnly %v, SameSite %s", c.HTTPOnly, c.SameSite)
				}
			}
		}
		if session == "" {
			t.Fatal("no JSESSIONID in the browser")
		}
		current := func() int {
			req, _ := http.NewRequest("GET", base+"/new/webservice/V5/users/current", nil)
			req.AddCookie(&http.Cookie{Name: "JSESSIONID", Value: session})
			resp, err := http.DefaultClient.Do(req)
			if err != nil {
				t.Fatal(err)
			}
			resp.Body.Close()
			return resp.StatusCode
		}
		if st := current(); st != 200 {
			t.Fatalf("the browser's session before sign-out: %d", st)
		}
		browse(t, ctx, "sign out", chromedp.Click(`#signout`, chromedp.ByQuery),
			chromedp.WaitVisible(`#view[data-view="login"][data-ready="1"]`, chromedp.ByQuery))
		if st := current(); st != 401 {
			t.Errorf("the browser's session after sign-out: %d, want 401", st)
		}
		screenshot(t, ctx, shots, "signed-out")
		// A reload stays signed out, without a refused request.
		browse(t, ctx, "reload", chromedp.Reload(), chromedp.WaitVisible(`#view[data-view="login"][data-ready="1"]`, chromedp.ByQuery))
	})

	// The trap receiver saved with a bad port is refused on purpose (400),
	// and Chromium logs every 4xx it loads.
	errs := slices.DeleteFunc(b.consoleErrors(), func(e string) bool {
		return strings.Contains(e, "status of 400") && strings.HasSuffix(e, "/V5/configuration/global/snmp")
	})
	if len(errs) > 0 {
		sort.Strings(errs)
		t.Errorf("the browser console shows errors:\n%s", strings.Join(errs, "\n"))
	}
	var names []string
	entries, _ := os.ReadDir(shots)
	for _, e := range entries {
		names = append(names, e.Name())
	}
	b2, _ := json.Marshal(names)
	t.Logf("screenshots: %s", b2)
}

// newServerAndBrowser starts Chromium (or skips) and a new server on an
// empty data directory, and answers its address, its bootstrap key and
// a client of the API signed in with it.
func newServerAndBrowser(t *testing.T) (*browser, string, struct{ KeyID, KeyValue string }, *apitest.Client) {
	t.Helper()
	b := startBrowser(t)
	dir := t.TempDir()
	l, _, _, _ := bootServe(t, nil, "--data", dir)
	key := readKeyFile(t, filepath.Join(dir, "bootstrap-key.json"))
	base := "http://" + l.API
	return b, base, key, apitest.Remote(t, base, key.KeyID, key.KeyValue)
}

// TestConsoleLearning runs the console on a new server (the demo keeps only
// its own data): a floor with data and no history yet has baselines
// charts that say "learning" where a slot has data and no baseline, and
// leave the slots without data as gaps; its site, with no incident and
// its AP up, is quiet on the first screen.
func TestConsoleLearning(t *testing.T) {
	b, base, key, admin := newServerAndBrowser(t)
	var site, floor struct {
		ID struct{ ID int64 } `json:"id"`
	}
	admin.Expect(200, "PUT", "/V5/locations", map[string]any{"parentLocation": map[string]any{"type": "locallocationid", "id": 0},
		"location": map[string]any{"type": "folderlocation", "name": "New site"}}).Decode(t, &site)
	admin.Expect(200, "PUT", "/V5/locations", map[string]any{"parentLocation": map[string]any{"type": "locallocationid", "id": site.ID.ID},
		"location": map[string]any{"type": "floorlocation", "name": "New floor"}}).Decode(t, &floor)
	admin.Expect(200, "POST", "/V5/ingest/aps", []any{map[string]any{"macaddress": "02:00:00:00:01:00", "name": "new-ap-1",
		"locationId": map[string]any{"type": "locallocationid", "id": floor.ID.ID},
		"radios":     []any{map[string]any{"macaddress": "02:00:00:00:01:01", "channel": 36, "ssid": "corp"}}}})
	admin.Expect(200, "POST", "/V5/ingest/clientevents", []any{map[string]any{"macAddress": "02:11:00:00:00:02",
		"bssid": "02:00:00:00:01:01", "channel": 36, "ssid": "corp", "timestamp": time.Now().UnixMilli(), "eventType": "Success"}})

	shots := screenshotDir(t)
	ctx := b.page()
	signInKey(t, ctx, base, key.KeyID, key.KeyValue)
	var state string
	browse(t, ctx, "the new site", chromedp.AttributeValue(fmt.Sprintf(`.site[data-site="%d"]`, site.ID.ID), "data-state", &state, nil, chromedp.ByQuery))
	if state != "quiet" {
		t.Errorf("the new site, with no incident and its AP up, is %q, want quiet:\n%s", state, text(t, ctx))
	}
	screenshot(t, ctx, shots, "new-site-overview")
	view(t, ctx, fmt.Sprintf("#/baselines/%d", floor.ID.ID), "baselines")
	if s := text(t, ctx); !strings.Contains(s, "Learning: 1 slot with data and no baseline yet") {
		t.Errorf("the new floor's baselines do not say learning:\n%s", s)
	}
	if n := count(t, ctx, `svg.chart rect.learn`); n == 0 {
		t.Error("no learning slot shaded")
	}
	if n := count(t, ctx, `svg.chart rect.nodata`); n == 0 {
		t.Error("no gap drawn for the slots without data")
	}
	if n := count(t, ctx, `svg.chart .obs`); n == 0 {
		t.Error("the slot with data is not drawn")
	}
	screenshot(t, ctx, shots, "new-floor-learning")
	if errs := b.consoleErrors(); len(errs) > 0 {
		t.Errorf("the browser console shows errors:\n%s", strings.Join(errs, "\n"))
	}
}

// TestConsoleAgainst runs the console test against a demo server already
// running (wnms serve --demo), for work on the console:
// WNMS_CONSOLE_BASE=http://127.0.0.1:8080 WNMS_CONSOLE_KEY=<data>/demo-key.json.
func TestConsoleAgainst(t *testing.T) {
	base, keyFile := os.Getenv("WNMS_CONSOLE_BASE"), os.Getenv("WNMS_CONSOLE_KEY")
	if base == "" || keyFile == "" {
		t.Skip("WNMS_CONSOLE_BASE and WNMS_CONSOLE_KEY name a running demo server")
	}
	key := readKeyFile(t, keyFile)
	testConsole(t, base, key.KeyID, key.KeyValue)
}

// BenchmarkConsoleFirstRender measures each view's first render at the
// demo's size in headless Chromium: a fresh page load of the view's
// address, signed in, until the view has drawn its data (the time since
// the navigation began, as the page measures it), 20 loads a view. It
// reports the p95 of each view, in ms. Run it once:
//
//	go test -run '^$' -bench ConsoleFirstRender -benchtime 1x ./cmd/wnms
func BenchmarkConsoleFirstRender(b *testing.B) {
	dir := b.TempDir()
	l, stdout, _, _ := bootServe(b, nil, "--data", dir, "--demo")
	for deadline := time.Now().Add(5 * time.Minute); !strings.Contains(stdout.String(), "live from now on"); time.Sleep(100 * time.Millisecond) {
		if time.Now().After(deadline) {
			b.Fatalf("the demo did not finish its backfill:\n%s", stdout.String())
		}
	}
	key := readKeyFile(b, filepath.Join(dir, "demo-key.json"))
	base := "http://" + l.API
	admin := apitest.Remote(b, base, key.KeyID, key.KeyValue)
	var clients struct {
		ClientList []struct{ MacAddress string } `json:"clientList"`
	}
	admin.Expect(200, "GET", "/V5/devices/clients/0/1", nil).Decode(b, &clients)
	br := startBrowser(b)
	ctx := br.page()
	signInKey(b, ctx, base, key.KeyID, key.KeyValue)
	views := []consoleView{
		{"#/", "overview"}, {"#/aps/0", "aps"}, {"#/clients", "clients"}, {"#/client/" + clients.ClientList[0].MacAddress, "client"},
		{"#/baselines/2", "baselines"}, {"#/floor/2", "floor"}, {"#/incidents", "incidents"}, {"#/servicelevels/1", "servicelevels"},
		{"#/network", "network"}, {"#/audit", "audit"}, {"#/settings", "settings"},
	}
	loads := 20
	if s := os.Getenv("WNMS_CONSOLE_LOADS"); s != "" {
		fmt.Sscan(s, &loads)
	}
	b.ResetTimer()
	for range b.N {
		for _, v := range views {
			var ms []float64
			for range loads {
				var at string
				browse(b, ctx, "load "+v.name, chromedp.Navigate("about:blank"), chromedp.Navigate(base+"/"+v.hash),
					chromedp.WaitVisible(fmt.Sprintf(`#view[data-view=%q][data-ready="1"]`, v.name), chromedp.ByQuery),
					chromedp.AttributeValue(`#view`, "data-rendered-at", &at, nil, chromedp.ByQuery))
				var n float64
				fmt.Sscan(at, &n)
				ms = append(ms, n)
				if testing.Verbose() {
					b.Logf("%s: %.0f ms", v.name, n)
				}
			}
			sort.Float64s(ms)
			b.ReportMetric(ms[len(ms)*95/100-1], "ms-p95-"+v.name)
		}
	}
	if errs := br.consoleErrors(); len(errs) > 0 {
		b.Errorf("the browser console shows errors:\n%s", strings.Join(errs, "\n"))
	}
}

// readKeyFile reads the API key a server wrote (bootstrap-key.json,
// demo-key.json).
func readKeyFile(t testing.TB, path string) (key struct{ KeyID, KeyValue string }) {
	t.Helper()
	raw, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(raw, &key); err != nil {
		t.Fatal(err)
	}
	return key
}

// TestConsoleManagesTheNetwork builds a site from the console of a new
// server, as an administrator does on the first day: a site in its time
// zone, a floor, an AP on it, the floor's size and image, and a user;
// each is read back through the API. The network view has no overflow
// and no text under 11 px at 390 px, and a VIEWER finds no form on it.
func TestConsoleManagesTheNetwork(t *testing.T) {
	b, base, key, admin := newServerAndBrowser(t)
	shots := screenshotDir(t)
	type loc struct {
		ID         struct{ ID int64 }  `json:"id"`
		Name       string              `json:"name"`
		Type       string              `json:"type"`
		ParentID   *struct{ ID int64 } `json:"parentId"`
		TimezoneID string              `json:"timezoneId"`
	}
	byName := func() map[string]loc {
		t.Helper()
		var tree struct{ Locations map[string]loc }
		admin.Expect(200, "GET", "/V5/locations/tree", nil).Decode(t, &tree)
		out := map[string]loc{}
		for _, l := range tree.Locations {
			out[l.Name] = l
		}
		return out
	}

	ctx := b.page()
	signInKey(t, ctx, base, key.KeyID, key.KeyValue)
	view(t, ctx, "#/network", "network")
	browse(t, ctx, "add a site",
		chromedp.SendKeys(`#new-site-name`, "North campus", chromedp.ByQuery),
		chromedp.SetValue(`#new-site-zone`, "Europe/Berlin", chromedp.ByQuery),
		chromedp.Click(`#new-site button[type=submit]`, chromedp.ByQuery),
		chromedp.WaitVisible(`//table[@aria-label="Sites and floors"]//td[text()="North campus"]`, chromedp.BySearch))
	site, ok := byName()["North campus"]
	if !ok || site.Type != "folderlocation" || site.TimezoneID != "Europe/Berlin" || site.ParentID == nil || site.ParentID.ID != 0 {
		t.Fatalf("the site as the API reads it: %+v (found %v)", site, ok)
	}
	browse(t, ctx, "add a floor",
		chromedp.SendKeys(`#new-floor-name`, "Level 2", chromedp.ByQuery),
		chromedp.SetValue(`#new-floor-parent`, fmt.Sprint(site.ID.ID), chromedp.ByQuery),
		chromedp.Click(`#new-floor button[type=submit]`, chromedp.ByQuery),
		chromedp.WaitVisible(`//td/a[text()="North campus / Level 2"]`, chromedp.BySearch))
	floor := byName()["Level 2"]
	if floor.Type != "floorlocation" || floor.ParentID == nil || floor.ParentID.ID != site.ID.ID {
		t.Fatalf("the floor as the API reads it: %+v", floor)
	}
	// What is typed survives a refresh the event stream brings (another
	// administrator adds a site meanwhile).
	browse(t, ctx, "type an AP",
		chromedp.SendKeys(`#new-ap-mac`, "02:ab:00:00:00:10", chromedp.ByQuery),
		chromedp.SendKeys(`#new-ap-name`, "n2-ap-1", chromedp.ByQuery),
		chromedp.SetValue(`#new-ap-floor`, fmt.Sprint(floor.ID.ID), chromedp.ByQuery))
	admin.Expect(200, "PUT", "/V5/locations", map[string]any{"parentLocation": map[string]any{"type": "locallocationid", "id": 0},
		"location": map[string]any{"type": "folderlocation", "name": "South campus"}})
	var typed, chosen string
	browse(t, ctx, "the refresh",
		chromedp.WaitVisible(`//table[@aria-label="Sites and floors"]//td[text()="South campus"]`, chromedp.BySearch),
		chromedp.Value(`#new-ap-mac`, &typed, chromedp.ByQuery),
		chromedp.Value(`#new-ap-floor`, &chosen, chromedp.ByQuery))
	if typed != "02:ab:00:00:00:10" || chosen != fmt.Sprint(floor.ID.ID) {
		t.Fatalf("after a refresh the AP form holds MAC %q and floor %q", typed, chosen)
	}
	browse(t, ctx, "register an AP",
		chromedp.SetValue(`#new-ap-channel`, "149", chromedp.ByQuery),
		chromedp.SendKeys(`#new-ap-ssid`, "corp", chromedp.ByQuery),
		chromedp.Click(`#new-ap button[type=submit]`, chromedp.ByQuery),
		chromedp.WaitVisible(`//p[@id="network-msg"][starts-with(., "Registered n2-ap-1")]`, chromedp.BySearch))
	var aps []wnms.AP
	admin.Expect(200, "GET", "/v2/devices/aps?macaddress=02:AB:00:00:00:10", nil).Decode(t, &aps)
	if len(aps) != 1 || aps[0].Name != "n2-ap-1" || aps[0].LocationID.ID != floor.ID.ID || len(aps[0].Radios) != 1 ||
		aps[0].Radios[0].Channel != 149 || aps[0].Radios[0].SSID != "corp" {
		t.Fatalf("the AP as the API reads it: %+v", aps)
	}
	// A bad MAC is said, and registers nothing.
	browse(t, ctx, "a bad AP",
		chromedp.SetValue(`#new-ap-mac`, "not-a-mac", chromedp.ByQuery),
		chromedp.Click(`#new-ap button[type=submit]`, chromedp.ByQuery),
		chromedp.WaitVisible(`//p[@id="network-msg"][starts-with(., "Register an AP: not done")]`, chromedp.BySearch))

	// The floor's size and image, from the floor plan view.
	img := filepath.Join(t.TempDir(), "level2.png")
	if err := os.WriteFile(img, tinyPNG(t), 0o644); err != nil {
		t.Fatal(err)
	}
	view(t, ctx, fmt.Sprintf("#/floor/%d", floor.ID.ID), "floor")
	browse(t, ctx, "save the plan",
		chromedp.SetValue(`#plan-length`, "40", chromedp.ByQuery),
		chromedp.SetValue(`#plan-width`, "25", chromedp.ByQuery),
		chromedp.SetValue(`#plan-unit`, "METER", chromedp.ByQuery),
		chromedp.SetUploadFiles(`#plan-image`, []string{img}, chromedp.ByQuery),
		chromedp.Click(`//button[text()="Save plan"]`, chromedp.BySearch),
		chromedp.WaitVisible(`//p[starts-with(., "Saved the plan of North campus / Level 2 and its image")]`, chromedp.BySearch),
		chromedp.WaitVisible(`svg.plan image`, chromedp.ByQuery))
	var layout wnms.FloorLayout
	admin.Expect(200, "GET", fmt.Sprintf("/V5/layouts?locationid=%d", floor.ID.ID), nil).Decode(t, &layout)
	if layout.Length != 40 || layout.Width != 25 || layout.Unit != "METER" || layout.ImageKey == nil {
		t.Fatalf("the layout as the API reads it: %+v", layout)
	}
	// The AP placed on the plan: chosen, a click where it hangs (the plan's
	// point 10, 5), Place; read back through the API, and drawn there.
	var at []float64
	browse(t, ctx, "choose the point",
		chromedp.ScrollIntoView(`svg.plan`, chromedp.ByQuery),
		chromedp.Evaluate(`(() => { const m = document.querySelector('svg.plan').getScreenCTM(); return [m.a * 10 + m.e, m.d * 5 + m.f]; })()`, &at))
	browse(t, ctx, "place the AP",
		chromedp.SetValue(`#place-ap`, fmt.Sprint(aps[0].BoxID), chromedp.ByQuery),
		chromedp.MouseClickXY(at[0], at[1]),
		chromedp.WaitVisible(`svg.plan .place-mark`, chromedp.ByQuery),
		chromedp.Click(`//button[text()="Place AP"]`, chromedp.BySearch),
		chromedp.WaitVisible(`//p[@id="place-msg"][starts-with(., "Placed n2-ap-1 at x ")]`, chromedp.BySearch),
		chromedp.WaitVisible(`svg.plan g.ap`, chromedp.ByQuery))
	admin.Expect(200, "GET", "/v2/devices/aps?macaddress=02:AB:00:00:00:10", nil).Decode(t, &aps)
	if p := aps[0].Position; p == nil || math.Abs(p.X-10) > 0.2 || math.Abs(p.Y-5) > 0.2 {
		t.Errorf("the AP placed at the plan's point 10, 5 is at %+v", p)
	}
	screenshot(t, ctx, shots, "network-floor-plan")

	// A user, from the settings, at the new site.
	view(t, ctx, "#/settings", "settings")
	browse(t, ctx, "add a user",
		chromedp.SendKeys(`#new-user-login`, "ana", chromedp.ByQuery),
		chromedp.SetValue(`#new-user-role`, "OPERATOR", chromedp.ByQuery),
		chromedp.SendKeys(`#new-user-password`, "ana-s3cret-pass", chromedp.ByQuery),
		chromedp.SetValue(`#new-user-location`, fmt.Sprint(site.ID.ID), chromedp.ByQuery),
		chromedp.Click(`//button[text()="Add user"]`, chromedp.BySearch),
		chromedp.WaitVisible(`//tr[td[1][text()="ana"]]`, chromedp.BySearch))
	var users []wnms.User
	admin.Expect(200, "GET", "/V5/users", nil).Decode(t, &users)
	var ana *wnms.User
	for i := range users {
		if users[i].LoginID == "ana" {
			ana = &users[i]
		}
	}
	if ana == nil || ana.Role != "OPERATOR" || len(ana.AllowedLocations) != 1 || ana.AllowedLocations[0].ID != site.ID.ID {
		t.Fatalf("the user as the API reads it: %+v", ana)
	}
	// A webhook, from the settings; its secret is never shown again.
	browse(t, ctx, "add a webhook",
		chromedp.SendKeys(`#new-hook-url`, "https://203.0.113.10/wnms", chromedp.ByQuery),
		chromedp.SendKeys(`#new-hook-secret`, "a-secret-of-20-chars", chromedp.ByQuery),
		chromedp.SendKeys(`#new-hook-kinds`, "apDown, incidentOpened", chromedp.ByQuery),
		chromedp.Click(`//button[text()="Add webhook"]`, chromedp.BySearch),
		chromedp.WaitVisible(`//table[@aria-label="Webhooks"]//td[text()="https://203.0.113.10/wnms"]`, chromedp.BySearch))
	var hooks []wnms.Webhook
	admin.Expect(200, "GET", "/V5/webhooks", nil).Decode(t, &hooks)
	if len(hooks) != 1 || hooks[0].URL != "https://203.0.113.10/wnms" || !slices.Equal(hooks[0].Kinds, []string{"apDown", "incidentOpened"}) ||
		hooks[0].Secret == "a-secret-of-20-chars" {
		t.Fatalf("the webhook as the API reads it: %+v", hooks)
	}
	if s := text(t, ctx); strings.Contains(s, "a-secret-of-20-chars") {
		t.Error("the settings show the webhook's secret")
	}
	// The audit log names who made the site, and its time zone.
	view(t, ctx, "#/audit", "audit")
	if s := text(t, ctx); !strings.Contains(s, "North campus") || !strings.Contains(s, "Europe/Berlin") || !strings.Contains(s, "PUT locations") {
		t.Errorf("the audit log:\n%s", s)
	}

	// The view at 1400 and 390 px.
	for _, width := range []int64{1400, 390} {
		browse(t, ctx, "width", chromedp.EmulateViewport(width, 900))
		view(t, ctx, "#/audit", "audit")
		var audited struct {
			Overflow    float64
			Wide, Small []string
		}
		browse(t, ctx, "layout", chromedp.Evaluate(layoutAudit, &audited))
		if audited.Overflow > 0 || len(audited.Small) > 0 {
			t.Errorf("the audit log at %d px: %d px too wide (%q), text under 11 px %q", width, int(audited.Overflow), audited.Wide, audited.Small)
		}
		screenshot(t, ctx, shots, fmt.Sprintf("audit-%d", width))
		view(t, ctx, "#/network", "network")
		var got struct {
			Overflow    float64
			Wide, Small []string
		}
		browse(t, ctx, "layout", chromedp.Evaluate(layoutAudit, &got))
		if got.Overflow > 0 {
			t.Errorf("%d px: %d px too wide for the window; past its edge: %q", width, int(got.Overflow), got.Wide)
		}
		if len(got.Small) > 0 {
			t.Errorf("%d px: text under 11 px:\n%s", width, strings.Join(got.Small, "\n"))
		}
		audit(t, ctx, "network")
		screenshot(t, ctx, shots, fmt.Sprintf("network-%d", width))
	}
	browse(t, ctx, "width", chromedp.EmulateViewport(1280, 1000))

	// A VIEWER reads the sites and floors and is offered no form.
	admin.Expect(200, "PUT", "/V5/users", map[string]any{"user": map[string]any{"loginId": "vera", "role": "VIEWER",
		"userType": "LOCAL", "allowedLocations": []any{map[string]any{"type": "locallocationid", "id": site.ID.ID}}}, "password": "vera-s3cret-pass"})
	vctx := b.page()
	signInPassword(t, vctx, base, "vera", "vera-s3cret-pass")
	view(t, vctx, "#/network", "network")
	if n := count(t, vctx, `#view form`); n != 0 {
		t.Errorf("a VIEWER is offered %d forms on the network view", n)
	}
	if s := text(t, vctx); !strings.Contains(s, "North campus / Level 2") || !strings.Contains(s, "reads the sites and floors") {
		t.Errorf("the VIEWER's network view:\n%s", s)
	}
	// A floor without a layout is 404 in the interface, and Chromium logs
	// every 4xx it loads: the new floor's, before its plan was saved.
	errs := slices.DeleteFunc(b.consoleErrors(), func(e string) bool {
		return strings.Contains(e, "status of 404") && strings.Contains(e, fmt.Sprintf("/V5/layouts?locationid=%d", floor.ID.ID))
	})
	if len(errs) > 0 {
		t.Errorf("the browser console shows errors:\n%s", strings.Join(errs, "\n"))
	}
}

// tinyPNG is a 4 × 3 PNG, a floor image.
func tinyPNG(t *testing.T) []byte {
	t.Helper()
	img := image.NewRGBA(image.Rect(0, 0, 4, 3))
	for i := range img.Pix {
		img.Pix[i] = 200
	}
	var buf bytes.Buffer
	if err := png.Encode(&buf, img); err != nil {
		t.Fatal(err)
	}
	return buf.Bytes()
}
