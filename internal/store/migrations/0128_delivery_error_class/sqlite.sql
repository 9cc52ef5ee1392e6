-- A delivery keeps its failure's class (dns, connect, tls, timeout,
-- status), never the receiver's own text: earlier rows' texts become
-- their class.
UPDATE webhook_deliveries SET last_error = CASE
    WHEN last_status > 0 AND (last_status < 200 OR last_status >= 300) THEN 'status'
    ELSE 'connect' END
WHERE last_error NOT IN ('', 'dns', 'connect', 'tls', 'timeout', 'status');
