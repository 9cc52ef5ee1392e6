// Package syslog is wnms's syslog listener (decisions §21): it receives
// the logs of hostapd, dnsmasq and ISC dhcpd and turns them into client
// events in the shape POST /V5/ingest/clientevents takes.
//
// # What is accepted
//
// Messages are RFC 5424 or RFC 3164 (Parse), over UDP (one datagram, one
// message) or TCP with newline or octet-counting framing (RFC 6587, told
// apart frame by frame: FrameReader). RFC 3164 is read as real senders
// write it: with or without a hostname (OpenWrt logd and busybox syslogd
// omit it), "Mmm dd hh:mm:ss" with or without a year or fractions, or an
// RFC 3339 timestamp (rsyslog's forwarding formats), a tag with or
// without "[pid]". Input without a <PRI> is not syslog and is dropped and
// counted. A Receiver bounds memory whatever senders do: a message is at
// most 8 KiB (longer ones are skipped and counted), TCP connections are
// capped and closed when idle.
//
// # From lines to events
//
// Lines of hostapd, dnsmasq/dnsmasq-dhcp and dhcpd become Observations
// (ParseLine); other lines are counted by program, never an error. An
// Assembler keeps, per client MAC and source, the current connection
// attempt, and makes:
//
//	association (on a wired 802.1X      Intermediate 1/1 Associated
//	  port, hostapd driver=wired, the
//	  port's "start authentication")
//	association → keys → DHCP ACK       Success: associationTimestamp, authenticationTimestamp
//	                                    (AP-STA-CONNECTED or the key handshake; 802.1X success
//	                                    if no key line), networkTimestamp, dhcpLatency (ms,
//	                                    from authentication, or association on an open network;
//	                                    never negative, as the DHCP server's clock may differ),
//	                                    ip and hostName (and clientName) from the ACK
//	DHCP ACK                            Intermediate 3/30 DHCP lease obtained, with ip
//	PSK mismatch, invalid MIC in 2/4,   Failure 2/201 Wrong pre-shared key
//	  key retry limit, or EAPOL-Key
//	  timeouts and no keys by the end
//	802.1X authentication failed        Failure 2/202 Credentials rejected by RADIUS
//	DHCPNAK                             Failure 3/302 DHCP NAK (the attempt goes on: a NAK
//	                                    then an ACK is a Failure and a Success)
//	no address available, no free       Failure 3/301 No DHCP offer
//	  leases, or DHCP asked and
//	  never ACKed by the end
//	association rejected                Failure 1/101 Association rejected by AP
//	AP-REJECTED-MAX-STA, no AIDs left   Failure 1/103 AP at client capacity
//	disassociated, deauthenticated,     Intermediate 1/3 Disassociated, subTypeCode the
//	  AP-STA-DISCONNECTED               reason code when the line gives one
//
// An attempt makes each Failure cause once, however many lines repeat it,
// and hostapd's two lines of one disconnection make one event. The DHCP
// server may be another box than the AP: a DHCP line joins the client's
// latest association at any source of the same owner (Assembler.Owner: a
// customer, so that one customer's DHCP server never touches another's
// client of the same MAC), and the events go out under the AP's address.
//
// An attempt "ends" when the client disconnects, associates again, or is
// silent for PendingTimeout (60 s). If it has no outcome by then: keys
// done and no DHCP line seen at all is a Success without DHCP
// (networkTimestamp and dhcpLatency absent): a static address, a roaming
// client keeping its lease, or a DHCP server that does not log to wnms,
// all of which would otherwise vanish from the success ratio. An
// association with nothing after it makes nothing. Key and port lines
// with no association seen (a rekey, or an attempt begun before wnms
// listened) make nothing either.
//
// # Event ids, time and what the caller fills
//
// An event's eventId is a hash of the line that made it (source, program,
// timestamp, client, kind of event), so a line received twice is a
// duplicate for ingest. Its timestamp is the line's, or the receive time
// when the line has none or is more than a day off. RFC 3164 timestamps
// carry no zone: Receiver.Location says which (UTC by default). A
// dhcpLatency is the difference of the lines' own times when both carry
// fractions of a second; when either has whole seconds only (RFC 3164, as
// most APs send), it is the difference of the times wnms received them, to
// the millisecond: whole-second stamps would make every latency 0 or a
// whole second.
//
// The assembler cannot know the radio's channel, nor its BSSID unless the
// line names one ("bssid=..."), both of which ingest requires; events
// carry the hostapd Interface so the caller can fill them from the source
// (the AP is the BSSID if the line names one, else the source), then
// ingest the batch (ClientEvent.Record gives each as ingest takes it).
// Wiring:
//
//	a := &syslog.Assembler{Sink: sink}
//	r := &syslog.Receiver{Handle: a.Observe, Accept: isSource}
//	go a.Run(ctx)
//	err := r.Serve(ctx, udpConn, tcpListener) // bound on the same address
//
// Receiver.Stats and Assembler.Stats give the counters for /metrics.
package syslog
