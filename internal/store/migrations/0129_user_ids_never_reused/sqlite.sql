-- SQLite gives a new row the highest id plus one, so the id of the user
-- deleted last went to the next user made. The highest id ever given is
-- kept here (a trigger raises it with every user made) and a new user's id
-- is above it (CreateUser), as AUTOINCREMENT would, which an existing
-- table cannot be switched to. PostgreSQL's sequence never hands an id out
-- twice.
CREATE TABLE id_high_water (
    name TEXT PRIMARY KEY,
    id   BIGINT NOT NULL
);
INSERT INTO id_high_water (name, id) SELECT 'users', coalesce(max(id), 0) FROM users;
CREATE TRIGGER users_id_high_water AFTER INSERT ON users BEGIN
    UPDATE id_high_water SET id = NEW.id WHERE name = 'users' AND id < NEW.id;
END;
