# Sourced by ./dev before `demo`, `test` and `kafka`: the system tools the Kafka broker needs, and
# the optional ones the command asks for in optional_tools.
# Java 17+ runs the broker; Maven resolves its jars once (then .local/kafka/lib has them). On Debian
# they are installed here when we may (root, or sudo without a password), as .ci/run does;
# otherwise ./dev stops with one line saying what is missing and the one command that installs it.
# (PostgreSQL is not needed here: the demo runs an embedded one when none answers.)

java_major() {
  java -version 2>&1 | sed -n 's/.*version "\(1\.\)\{0,1\}\([0-9]*\).*/\2/p' | head -1
}

missing_packages=()
if ! command -v java >/dev/null 2>&1 || [ "$(java_major || echo 0)" -lt 17 ]; then
  missing_packages+=(openjdk-17-jre-headless)
fi
if ! command -v mvn >/dev/null 2>&1 && ! ls .local/kafka/lib/kafka_2.13-*.jar >/dev/null 2>&1; then
  missing_packages+=(maven)
fi

# What the command asked for beyond the broker (./dev sets optional_tools): the demo's charts and
# alerts need Prometheus; the tests also drive Chromium. Installed alongside when we may; otherwise
# ./dev says what is missing and carries on without it.
missing_optional=()
for tool in ${optional_tools:-}; do
  # /usr/sbin is not on a user's PATH on Debian, and pgbouncer is installed there.
  command -v "$tool" >/dev/null 2>&1 || [ -x "/usr/sbin/$tool" ] || missing_optional+=("$tool")
done

may_install() {
  command -v apt-get >/dev/null 2>&1 && { [ "$(id -u)" -eq 0 ] || sudo -n true 2>/dev/null; }
}

if [ ${#missing_packages[@]} -gt 0 ] || { [ ${#missing_optional[@]} -gt 0 ] && may_install; }; then
  to_install=("${missing_packages[@]}" "${missing_optional[@]}")
  install_command="apt-get install -y --no-install-recommends ${to_install[*]}"
  if may_install; then
    as_root=""; [ "$(id -u)" -eq 0 ] || as_root="sudo -n"
    echo "setup: installing ${to_install[*]} (Java 17+ runs the Kafka broker, Maven fetches its jars once; prometheus draws the charts and evaluates the alerts; chromium runs the browser tests; pgbouncer, the long tier's pooler test)"
    if { $as_root apt-get update -qq && DEBIAN_FRONTEND=noninteractive $as_root $install_command -qq >/dev/null; }; then
      missing_optional=()
    elif [ ${#missing_packages[@]} -gt 0 ]; then
      echo "setup: could not install ${to_install[*]}; run: sudo $install_command" >&2
      exit 1
    else
      echo "setup: could not install ${missing_optional[*]}; run: sudo $install_command" >&2
    fi
  elif command -v apt-get >/dev/null 2>&1; then
    echo "missing: ${missing_packages[*]} (the Kafka broker needs Java 17+, and Maven once for its jars); run: sudo $install_command" >&2
    exit 1
  else
    echo "missing: Java 17+ and Maven (the Kafka broker needs Java, and Maven once for its jars); install a JDK 17+ and Apache Maven and put java and mvn on PATH" >&2
    exit 1
  fi
fi

for tool in "${missing_optional[@]}"; do
  case "$tool" in
    prometheus) echo "setup: no prometheus here, so the console will have no charts or alerts; to add them: sudo apt-get install -y prometheus" >&2 ;;
    chromium) echo "setup: no chromium here, so the browser tests will fail; to add it: sudo apt-get install -y chromium" >&2 ;;
    pgbouncer) echo "setup: no pgbouncer here, so the long tier's PgBouncer test will fail; to add it: sudo apt-get install -y pgbouncer" >&2 ;;
  esac
done
