package snmp

import (
	"path/filepath"
	"strings"
	"testing"

	"github.com/wnms/wnms/internal/snmp/snmptest"
)

// TestMIBLoadsWithNetSNMP: snmptranslate, on a machine with only
// Debian's snmp package (no IETF modules), loads WNMS-MIB from the
// repository's mibs directory and resolves every notification and object
// by name to the OID the server uses.
func TestMIBLoadsWithNetSNMP(t *testing.T) {
	dir, err := filepath.Abs("../../mibs")
	if err != nil {
		t.Fatal(err)
	}
	env := snmptest.Env(t)
	names := map[string]OID{
		"wnmsApsUp": oidAPsUp[:len(oidAPsUp)-1], "wnmsApsDown": oidAPsDown[:len(oidAPsDown)-1],
		"wnmsClientsActive": oidClients[:len(oidClients)-1], "wnmsAnomaliesOpen": oidOpenAnomalies[:len(oidOpenAnomalies)-1],
		"wnmsTrapApName": oidTrapAPName, "wnmsTrapApMacAddress": oidTrapAPMac, "wnmsTrapLocationPath": oidTrapLocation,
		"wnmsTrapAnomalyKind": oidTrapAnomalyKind, "wnmsTrapSlotStart": oidTrapSlotStart,
		"wnmsTrapObservation": oidTrapObservation, "wnmsTrapThreshold": oidTrapThreshold,
		"wnmsTrapUserLogin": oidTrapUserLogin, "wnmsTrapMessage": oidTrapMessage, "wnmsTrapApBoxId": oidTrapAPBoxID,
		"wnmsTrapUpstreamAddress": oidTrapUpstream, "wnmsTrapUpstreamKind": oidTrapUpstreamKnd,
		"wnmsServer": SysObjectID,
	}
	for kind, oid := range notificationOIDs {
		if kind != KindColdStart {
			names[kind] = oid
		}
	}
	for name, want := range names {
		out, err := snmptest.Run(t, env, "snmptranslate", "-On", "-M", "+:"+dir, "-m", "+WNMS-MIB", "WNMS-MIB::"+name)
		lines := strings.Split(strings.TrimSpace(out), "\n")
		if got := lines[len(lines)-1]; err != nil || got != want.String() {
			t.Errorf("snmptranslate WNMS-MIB::%s = %q (%v), want %s", name, got, err, want)
		}
	}
	// The module itself parses without a warning.
	out, err := snmptest.Run(t, env, "snmptranslate", "-M", dir, "-m", "WNMS-MIB", "-Pw", "-Tp", Enterprise.String())
	if err != nil || strings.Contains(out, "Did not find") || strings.Contains(out, "Unlinked") || strings.Contains(out, "rror") {
		t.Errorf("WNMS-MIB does not load cleanly: %v\n%s", err, out)
	}
}
