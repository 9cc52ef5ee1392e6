package snmp

import (
	"github.com/gosnmp/gosnmp"

	"github.com/wnms/wnms/internal/wnms"
)

// usmUser is an SNMPv3 user with its keys localized to one engine id
// (RFC 3414 §2.6): the slow part of USM is done once per policy, not per
// message.
type usmUser struct {
	params *gosnmp.UsmSecurityParameters
	level  gosnmp.SnmpV3MsgFlags // NoAuthNoPriv, AuthNoPriv or AuthPriv
}

var authProtocols = map[wnms.SNMPAuthProtocol]gosnmp.SnmpV3AuthProtocol{
	wnms.AuthNone: gosnmp.NoAuth, "": gosnmp.NoAuth, wnms.AuthMD5: gosnmp.MD5, wnms.AuthSHA: gosnmp.SHA,
	wnms.AuthSHA224: gosnmp.SHA224, wnms.AuthSHA256: gosnmp.SHA256, wnms.AuthSHA384: gosnmp.SHA384, wnms.AuthSHA512: gosnmp.SHA512,
}

// privProtocols: AES192 and AES256 are the key extension of net-snmp's
// "AES192"/"AES256" (draft-blumenthal-aes-usm).
var privProtocols = map[wnms.SNMPPrivProtocol]gosnmp.SnmpV3PrivProtocol{
	wnms.PrivNone: gosnmp.NoPriv, "": gosnmp.NoPriv, wnms.PrivDES: gosnmp.DES, wnms.PrivAES: gosnmp.AES,
	wnms.PrivAES192: gosnmp.AES192, wnms.PrivAES256: gosnmp.AES256,
}

// newUSMUser localizes a user's keys to engineID.
func newUSMUser(name string, auth wnms.SNMPAuthProtocol, authPass string, priv wnms.SNMPPrivProtocol, privPass string,
	engineID string, boots, time uint32) (*usmUser, error) {
	p := &gosnmp.UsmSecurityParameters{
		UserName:                 name,
		AuthoritativeEngineID:    engineID,
		AuthoritativeEngineBoots: boots,
		AuthoritativeEngineTime:  time,
		AuthenticationProtocol:   authProtocols[auth],
		PrivacyProtocol:          privProtocols[priv],
		AuthenticationPassphrase: authPass,
		PrivacyPassphrase:        privPass,
	}
	level := gosnmp.NoAuthNoPriv
	if p.AuthenticationProtocol != gosnmp.NoAuth {
		level = gosnmp.AuthNoPriv
		if p.PrivacyProtocol != gosnmp.NoPriv {
			level = gosnmp.AuthPriv
		}
	} else {
		p.PrivacyProtocol = gosnmp.NoPriv
	}
	if level == gosnmp.NoAuthNoPriv {
		p.AuthenticationProtocol = gosnmp.NoAuth
	}
	if err := p.InitSecurityKeys(); err != nil {
		return nil, err
	}
	// gosnmp seeds the privacy salt at random when it checks a session's
	// parameters; decoding nothing makes it do so (the error is expected).
	x := &gosnmp.GoSNMP{Version: gosnmp.Version3, SecurityModel: gosnmp.UserSecurityModel, MsgFlags: level, SecurityParameters: p}
	_, _ = x.SnmpDecodePacket(nil)
	return &usmUser{params: p, level: level}, nil
}

// copyFor returns the user's parameters for one message, with the
// engine's boots and time.
func (u *usmUser) copyFor(boots, time uint32) *gosnmp.UsmSecurityParameters {
	p := u.params.Copy().(*gosnmp.UsmSecurityParameters)
	p.AuthoritativeEngineBoots, p.AuthoritativeEngineTime = boots, time
	return p
}
