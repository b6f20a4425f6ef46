#!/bin/sh
# Run once by the postgres image on a new data directory (/docker-entrypoint-initdb.d).
# covel_owner owns the schema and runs the migrations; covel_app is what the API and the workers
# connect as: `npm run migrate` with COVEL_APP_ROLE=covel_app grants it SELECT and INSERT on events
# (never UPDATE, DELETE, TRUNCATE or TRIGGER, and not the owner, so it cannot disable the
# append-only trigger) and SELECT, INSERT, UPDATE, DELETE on the projection tables.
set -e
psql -v ON_ERROR_STOP=1 --username "$POSTGRES_USER" --dbname postgres \
  -v owner_password="${COVEL_DB_OWNER_PASSWORD:?set COVEL_DB_OWNER_PASSWORD}" \
  -v app_password="${COVEL_DB_APP_PASSWORD:?set COVEL_DB_APP_PASSWORD}" <<'SQL'
create role covel_owner login password :'owner_password' nosuperuser nocreatedb nocreaterole;
create role covel_app login password :'app_password' nosuperuser nocreatedb nocreaterole;
create database covel owner covel_owner;
SQL
