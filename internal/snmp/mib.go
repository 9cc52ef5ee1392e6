package snmp

// The objects and notifications of WNMS-MIB (mibs/WNMS-MIB.txt), and the
// standard objects the agent serves.

// Enterprise is the root of WNMS-MIB: enterprises.61550. The number is
// not registered with IANA; it lies above the numbers assigned when it
// was chosen. A site that must avoid any clash can still load the MIB and
// filter on the notification names.
var Enterprise = MustOID("1.3.6.1.4.1.61550")

// The subtrees of WNMS-MIB.
var (
	wnmsNotifications = Enterprise.Append(0)
	wnmsObjects       = Enterprise.Append(1)
	wnmsStatus        = wnmsObjects.Append(1) // the agent's scalar objects
	wnmsTrapObjects   = wnmsObjects.Append(2) // varbinds of notifications
	// SysObjectID is the sysObjectID of the agent: wnmsServer.
	SysObjectID = Enterprise.Append(2, 1)
)

// Scalars of wnmsStatus, served by the agent.
var (
	oidAPsUp         = wnmsStatus.Append(1, 0) // wnmsApsUp
	oidAPsDown       = wnmsStatus.Append(2, 0) // wnmsApsDown
	oidClients       = wnmsStatus.Append(3, 0) // wnmsClientsActive
	oidOpenAnomalies = wnmsStatus.Append(4, 0) // wnmsAnomaliesOpen
)

// Varbind objects of notifications (accessible-for-notify).
var (
	oidTrapAPName      = wnmsTrapObjects.Append(1)  // wnmsTrapApName
	oidTrapAPMac       = wnmsTrapObjects.Append(2)  // wnmsTrapApMacAddress
	oidTrapLocation    = wnmsTrapObjects.Append(3)  // wnmsTrapLocationPath
	oidTrapAnomalyKind = wnmsTrapObjects.Append(4)  // wnmsTrapAnomalyKind
	oidTrapSlotStart   = wnmsTrapObjects.Append(5)  // wnmsTrapSlotStart
	oidTrapObservation = wnmsTrapObjects.Append(6)  // wnmsTrapObservation
	oidTrapThreshold   = wnmsTrapObjects.Append(7)  // wnmsTrapThreshold
	oidTrapUserLogin   = wnmsTrapObjects.Append(8)  // wnmsTrapUserLogin
	oidTrapMessage     = wnmsTrapObjects.Append(9)  // wnmsTrapMessage
	oidTrapAPBoxID     = wnmsTrapObjects.Append(10) // wnmsTrapApBoxId
	oidTrapUpstream    = wnmsTrapObjects.Append(11) // wnmsTrapUpstreamAddress
	oidTrapUpstreamKnd = wnmsTrapObjects.Append(12) // wnmsTrapUpstreamKind
	oidTrapIncidentID  = wnmsTrapObjects.Append(13) // wnmsTrapIncidentId
	oidTrapIncidentCse = wnmsTrapObjects.Append(14) // wnmsTrapIncidentCause
	oidTrapIncidentScp = wnmsTrapObjects.Append(15) // wnmsTrapIncidentScope
)

// Notification kinds: the names of WNMS-MIB (coldStart is SNMPv2-MIB's).
const (
	KindColdStart       = "coldStart"
	KindTestTrap        = "wnmsTestTrap"
	KindAPDown          = "wnmsApDown"
	KindAPUp            = "wnmsApUp"
	KindBaselineAnomaly = "wnmsBaselineAnomaly"
	KindUserLocked      = "wnmsUserLocked"
	KindUpstreamDown    = "wnmsUpstreamDown"
	KindUpstreamUp      = "wnmsUpstreamUp"
	KindIncidentOpened  = "wnmsIncidentOpened"
	KindIncidentClosed  = "wnmsIncidentClosed"
)

// notificationOIDs are the snmpTrapOID values of the kinds.
var notificationOIDs = map[string]OID{
	KindColdStart:       MustOID("1.3.6.1.6.3.1.1.5.1"),
	KindTestTrap:        wnmsNotifications.Append(1),
	KindAPDown:          wnmsNotifications.Append(2),
	KindAPUp:            wnmsNotifications.Append(3),
	KindBaselineAnomaly: wnmsNotifications.Append(4),
	KindUserLocked:      wnmsNotifications.Append(5),
	KindUpstreamDown:    wnmsNotifications.Append(6),
	KindUpstreamUp:      wnmsNotifications.Append(7),
	KindIncidentOpened:  wnmsNotifications.Append(8),
	KindIncidentClosed:  wnmsNotifications.Append(9),
}

// Standard objects.
var (
	oidSysUpTime   = MustOID("1.3.6.1.2.1.1.3.0")
	oidSnmpTrapOID = MustOID("1.3.6.1.6.3.1.1.4.1.0")
	oidSystem      = MustOID("1.3.6.1.2.1.1")
	oidInterfaces  = MustOID("1.3.6.1.2.1.2")
	oidIfMIBObj    = MustOID("1.3.6.1.2.1.31.1.1.1") // ifXEntry
	oidHrSystem    = MustOID("1.3.6.1.2.1.25.1")
	oidHrStorage   = MustOID("1.3.6.1.2.1.25.2")
	oidHrProcessor = MustOID("1.3.6.1.2.1.25.3.3.1")
	oidHrStoreRAM  = MustOID("1.3.6.1.2.1.25.2.1.2")
	oidHrStoreDisk = MustOID("1.3.6.1.2.1.25.2.1.4")
	// USM statistics the agent reports to managers (RFC 3414 §3.2); an
	// unknown user and a wrong digest get no answer at all.
	oidUnknownEngineIDs = MustOID("1.3.6.1.6.3.15.1.1.4.0")
	oidNotInTimeWindows = MustOID("1.3.6.1.6.3.15.1.1.2.0")
	oidUnsupportedLevel = MustOID("1.3.6.1.6.3.15.1.1.1.0")
)
