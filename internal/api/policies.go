package api

import (
	"encoding/json"
	"errors"
	"net/http"

	"github.com/wnms/wnms/internal/httpkit"
	"github.com/wnms/wnms/internal/snmp"
	"github.com/wnms/wnms/internal/wnms"
)

// The global policies (docs/api.md §9): one SNMP policy and one hotspot SSID policy
// per customer, created at the root location. They take no location, so
// any caller of the customer reads them (and may write them, as its role
// allows). Secrets leave only masked.

// policyBody reads a policy PUT body as raw JSON (415 for a non-JSON
// content type, 413 above httpkit.MaxJSONBody); the policy's parser does the rest.
func policyBody(w http.ResponseWriter, r *http.Request) ([]byte, error) {
	var raw json.RawMessage
	if err := httpkit.DecodeJSON(w, r, &raw, httpkit.MaxJSONBody); err != nil {
		return nil, err
	}
	return raw, nil
}

// getSNMPPolicy is GET /configuration/global/snmp?isdefault=&nodeid=: the
// caller's customer's SNMP policy (isdefault=true: the built-in default),
// secrets masked.
func (s *Server) getSNMPPolicy(w http.ResponseWriter, r *http.Request) error {
	isDefault, err := httpkit.QueryBool(r, "isdefault", false)
	if err != nil {
		return err
	}
	p := wnms.DefaultSNMPPolicy()
	if !isDefault {
		if p, err = s.Store.SNMPPolicy(r.Context(), wnms.CallerFrom(r.Context()).CustomerID()); err != nil {
			return err
		}
	}
	httpkit.WriteJSON(w, http.StatusOK, p.Masked())
	return nil
}

// putSNMPPolicy is PUT /configuration/global/snmp?nodeid=: replaces the
// SNMP policy; masked secrets keep their stored values. Answers the stored
// policy, masked. Any bad field changes nothing.
func (s *Server) putSNMPPolicy(w http.ResponseWriter, r *http.Request) error {
	body, err := policyBody(w, r)
	if err != nil {
		return err
	}
	p, err := s.Store.UpdateSNMPPolicy(r.Context(), wnms.CallerFrom(r.Context()).CustomerID(),
		func(current *wnms.SNMPPolicy) (*wnms.SNMPPolicy, error) {
			return wnms.ParseSNMPPolicy(body, current)
		})
	if err != nil {
		return err
	}
	if s.OnSNMPPolicyChange != nil {
		s.OnSNMPPolicyChange()
	}
	httpkit.WriteJSON(w, http.StatusOK, p.Masked())
	return nil
}

// testTrap is POST /configuration/global/snmp/testtrap?nodeid=: sends
// wnmsTestTrap now to every receiver of the caller's customer's policy
// that has enableTraps, and answers what became of it at each. A policy
// that sends no traps, or has no receiver to send to, is a conflict.
func (s *Server) testTrap(w http.ResponseWriter, r *http.Request) error {
	c := wnms.CallerFrom(r.Context())
	res, err := s.SNMP.TestTrap(r.Context(), c.CustomerID(), c.User.LoginID)
	switch {
	case errors.Is(err, snmp.ErrTrapsOff):
		return wnms.Errorf(wnms.Conflict, "%s", err.Error())
	case err != nil:
		return err
	case len(res) == 0:
		return wnms.Errorf(wnms.Conflict, "no receiver in snmpServerlist has enableTraps")
	}
	httpkit.WriteJSON(w, http.StatusOK, map[string]any{"kind": snmp.KindTestTrap, "receivers": res})
	return nil
}

// getHotspotSSIDPolicy is GET /configuration/global/hotspotssid?isdefault=:
// the caller's customer's hotspot SSIDs (isdefault=true: the built-in
// default, no SSIDs).
func (s *Server) getHotspotSSIDPolicy(w http.ResponseWriter, r *http.Request) error {
	isDefault, err := httpkit.QueryBool(r, "isdefault", false)
	if err != nil {
		return err
	}
	p := wnms.DefaultHotspotSSIDPolicy()
	if !isDefault {
		if p, err = s.Store.HotspotSSIDPolicy(r.Context(), wnms.CallerFrom(r.Context()).CustomerID()); err != nil {
			return err
		}
	}
	httpkit.WriteJSON(w, http.StatusOK, p)
	return nil
}

// putHotspotSSIDPolicy is PUT /configuration/global/hotspotssid: replaces
// the hotspot SSID list and answers the stored policy.
func (s *Server) putHotspotSSIDPolicy(w http.ResponseWriter, r *http.Request) error {
	body, err := policyBody(w, r)
	if err != nil {
		return err
	}
	p, err := wnms.ParseHotspotSSIDPolicy(body)
	if err != nil {
		return err
	}
	if err := s.Store.PutHotspotSSIDPolicy(r.Context(), wnms.CallerFrom(r.Context()).CustomerID(), p); err != nil {
		return err
	}
	httpkit.WriteJSON(w, http.StatusOK, p)
	return nil
}
