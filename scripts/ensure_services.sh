#!/usr/bin/env bash
# Start Redis, MariaDB and PostgreSQL on 127.0.0.1 if they do not answer; fail loudly if
# they still don't. PostgreSQL is the source database of the dataset snapshot tests.
set -u

redis_up() { redis-cli -h 127.0.0.1 -p 6379 ping 2>/dev/null | grep -q PONG; }
mariadb_up() { mysqladmin -h 127.0.0.1 -P 3306 -uroot --connect-timeout=2 ping >/dev/null 2>&1; }
postgres_up() { pg_isready -h 127.0.0.1 -p 5432 -U postgres -t 2 >/dev/null 2>&1; }

wait_for() {  # name, check function, seconds
  local i
  for ((i = 0; i < $3 * 2; i++)); do "$2" && return 0; sleep 0.5; done
  echo "FATAL: $1 is not answering on 127.0.0.1 after $3 s" >&2
  return 1
}

if ! redis_up; then
  echo "Redis is not answering; starting it" >&2
  mkdir -p /var/lib/redis /var/log/redis 2>/dev/null
  redis-server --daemonize yes --bind 127.0.0.1 -::1 --port 6379 --save "" --appendonly no \
    --dir /var/lib/redis --logfile /var/log/redis/ci.log \
    || redis-server --daemonize yes --bind 127.0.0.1 --port 6379 --save "" --appendonly no
  wait_for Redis redis_up 20 || exit 1
fi

if ! mariadb_up; then
  echo "MariaDB is not answering; starting it" >&2
  start-stop-daemon --start --oknodo --background --exec /usr/sbin/mariadbd 2>/dev/null
  if ! wait_for MariaDB mariadb_up 20 2>/dev/null; then
    mkdir -p /run/mysqld && chown mysql:mysql /run/mysqld 2>/dev/null
    (/usr/sbin/mariadbd --user=mysql >/tmp/mariadbd.log 2>&1 &)
    wait_for MariaDB mariadb_up 40 || exit 1
  fi
fi
if ! postgres_up; then
  echo "PostgreSQL is not answering; starting it" >&2
  # The Debian cluster (pg_lsclusters), whatever its version; else the service script.
  read -r version cluster _ < <(pg_lsclusters --no-header 2>/dev/null | head -n 1)
  if [ -n "${version:-}" ]; then
    pg_ctlcluster "$version" "$cluster" start 2>/dev/null
  else
    service postgresql start >/dev/null 2>&1
  fi
  wait_for PostgreSQL postgres_up 30 || exit 1
fi
echo "services: Redis, MariaDB and PostgreSQL answer on 127.0.0.1" >&2
