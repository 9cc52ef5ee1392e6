-- clients_mac serves lookups of a client by MAC; it need not be unique:
-- a MAC has one box_id (devices is unique on customer, kind and MAC), and
-- box_id is the key. As a second unique index it made two replicas that
-- wrote the same new client at the same moment fail one of them: ON
-- CONFLICT (box_id) resolves only box_id's conflicts, and the insert that
-- lost the race met the MAC's first.
DROP INDEX clients_mac;
CREATE INDEX clients_mac ON clients (customer_id, mac);
