#!/bin/sh
# scripts/test-secret-service.sh BIN_DIR VENV: the real Secret Service clients
# against apphome-secretd, inside a private session bus where it is the only
# provider (run under dbus-run-session: the EndToEndTests suite
# SecretServiceProviderTests does). Each check prints "ok: ..." or
# "FAIL: ..."; the exit status is the number of failures.
#
# VENV is scripts/python-keyring-venv.sh's environment (PyPI keyring, with
# secretstorage and jeepney). git-credential-libsecret is built once from the
# source Debian's git ships, into .build/git-credential-libsecret.
set -u
BIN=$1
VENV=$2
here=$(cd "$(dirname "$0")/.." && pwd)
fails=0
ok() { echo "ok: $1"; }
fail() { echo "FAIL: $1"; fails=$((fails + 1)); }
check() { # check NAME EXPECTED ACTUAL
    if [ "$2" = "$3" ]; then ok "$1"; else fail "$1: expected '$2', got '$3'"; fi
}

tmp=$(mktemp -d "${TMPDIR:-/tmp}/apphome-ss.XXXXXX")
export APPHOME_ROOT="$tmp/root" APPHOME_PREFSD=off APPHOME_KEYCHAIN_KEY_CACHE=600 HOME="$tmp"
export GIT_CONFIG_NOSYSTEM=1 GIT_CONFIG_GLOBAL=/dev/null GIT_TERMINAL_PROMPT=0
mkdir -m 700 "$APPHOME_ROOT"
sec() { "$BIN/security" "$@"; }

# git-credential-libsecret, built once per tree.
helper="$here/.build/git-credential-libsecret"
if [ ! -x "$helper" ]; then
    src=/usr/share/doc/git/contrib/credential/libsecret/git-credential-libsecret.c
    gcc -O2 -o "$helper.tmp" "$src" $(pkg-config --cflags --libs libsecret-1 glib-2.0) && mv "$helper.tmp" "$helper" \
        || fail "building git-credential-libsecret"
fi

# No keychain: the provider refuses and says how.
out=$("$BIN/apphome-secretd" 2>&1); rc=$?
case "$out" in *"security create-keychain"*) [ $rc -ne 0 ] && ok "refuses without a keychain" || fail "rc $rc";; *) fail "no-keychain message: $out";; esac

# A keychain whose device key is in the Secret Service: refused, and says how.
mkdir -p "$tmp/ssroot/Keychains"
python3 -c '
import plistlib, sys
plistlib.dump({"FormatVersion": 1, "DeviceID": "0" * 36, "RootKeyStore": "secret-service", "KeyCheck": b"x"},
              open(sys.argv[1], "wb"), fmt=plistlib.FMT_BINARY)' "$tmp/ssroot/Keychains/device.plist"
chmod 700 "$tmp/ssroot" "$tmp/ssroot/Keychains"; chmod 600 "$tmp/ssroot/Keychains/device.plist"
out=$("$BIN/apphome-secretd" --root "$tmp/ssroot" 2>&1); rc=$?
case "$out" in *"keeps its device key in the Secret Service"*"passphrase key file"*) [ $rc -ne 0 ] && ok "refuses a keychain keyed in the Secret Service" || fail "rc $rc";; *) fail "secret-service keychain: $out";; esac

printf 'pass phrase\n' | sec create-keychain || fail "create-keychain"
"$BIN/apphome-secretd" 2>"$tmp/secretd.log" &
pid=$!
trap 'kill $pid 2>/dev/null; rm -rf "$tmp"' EXIT
i=0
until gdbus call --session -d org.freedesktop.DBus -o /org/freedesktop/DBus -m org.freedesktop.DBus.GetNameOwner org.freedesktop.secrets >/dev/null 2>&1; do
    i=$((i + 1)); [ $i -gt 100 ] && { fail "apphome-secretd did not take the name: $(cat "$tmp/secretd.log")"; exit 1; }
    sleep 0.1
done
ok "apphome-secretd owns org.freedesktop.secrets"

# A second provider never replaces the first.
out=$("$BIN/apphome-secretd" 2>&1); rc=$?
case "$out" in *"owns org.freedesktop.secrets"*) [ $rc -ne 0 ] && ok "a second provider refuses" || fail "rc $rc";; *) fail "second provider: $out";; esac

# secret-tool (libsecret: the dh session, the default alias path).
printf 's3cret' | secret-tool store --label='Tool item' app demo kind test || fail "secret-tool store"
check "secret-tool lookup" "s3cret" "$(secret-tool lookup app demo)"
out=$(secret-tool search app demo 2>&1)
case "$out" in *"attribute.kind = test"*"s3cret"*|*"s3cret"*"attribute.kind = test"*) ok "secret-tool search";; *) fail "secret-tool search: $out";; esac
printf 'n3w' | secret-tool store --label='Tool item' app demo kind test
check "secret-tool store replaces" "n3w" "$(secret-tool lookup app demo kind test)"
check "one item after replace" "1" "$(secret-tool search --all app demo 2>&1 | grep -c '^label')"
out=$(sec dump-keychain)
case "$out" in *'"app"="demo"'*) ok "security dump-keychain shows the attributes";; *) fail "dump-keychain: $out";; esac
# The login keychain is the user's: a client started in an app's context (as `apphome run`
# starts it) is refused, however it asks; the same client outside it is answered.
out=$(APPHOME_BUNDLE_ID=com.example.ScaryBugs secret-tool lookup app demo 2>&1); rc=$?
case "$out" in *"n3w"*) fail "an app's secret-tool read the login keychain";; *) [ $rc -ne 0 ] && ok "a client in an app's context is refused" || fail "app context: rc $rc '$out'";; esac
out=$(printf 'x' | APPHOME_HOME=/nonexistent secret-tool store --label=x app forged 2>&1); rc=$?
[ $rc -ne 0 ] && ok "an app's store is refused" || fail "app context store: rc $rc '$out'"
secret-tool lookup app forged >/dev/null 2>&1 && fail "an app's item was stored" || ok "nothing stored by an app"
check "the user is still answered" "n3w" "$(secret-tool lookup app demo kind test)"
secret-tool clear app demo
secret-tool lookup app demo >/dev/null 2>&1 && fail "secret-tool clear" || ok "secret-tool clear"

# The plain session and the errors, through gdbus.
printf 'plainvalue' | secret-tool store --label=P plain yes
item=$(gdbus call --session -d org.freedesktop.secrets -o /org/freedesktop/secrets -m org.freedesktop.Secret.Service.SearchItems "{'plain': 'yes'}" | grep -o "/org/freedesktop/secrets/collection/login/[0-9a-f]*" | head -1)
session=$(gdbus call --session -d org.freedesktop.secrets -o /org/freedesktop/secrets -m org.freedesktop.Secret.Service.OpenSession plain "<''>" | grep -o "/org/freedesktop/secrets/session/[^']*")
[ -n "$item" ] && [ -n "$session" ] || fail "plain: item '$item' session '$session'"
# gdbus opens a new connection per call, so the session is not its own: NoSession.
out=$(gdbus call --session -d org.freedesktop.secrets -o "$item" -m org.freedesktop.Secret.Item.GetSecret "$session" 2>&1)
case "$out" in *NoSession*) ok "a session is its owner's only";; *) fail "other client's session: $out";; esac
out=$(gdbus call --session -d org.freedesktop.secrets -o /org/freedesktop/secrets -m org.freedesktop.Secret.Service.OpenSession dh-ietf2048-sha256 "<''>" 2>&1)
case "$out" in *org.freedesktop.DBus.Error.NotSupported*) ok "unknown algorithm: NotSupported";; *) fail "unknown algorithm: $out";; esac
out=$(gdbus call --session -d org.freedesktop.secrets -o /org/freedesktop/secrets/collection/login/00000000000000000000000000000000 -m org.freedesktop.Secret.Item.Delete 2>&1)
case "$out" in *NoSuchObject*) ok "no such item: NoSuchObject";; *) fail "no such item: $out";; esac
check "default alias" "(objectpath '/org/freedesktop/secrets/collection/login',)" \
    "$(gdbus call --session -d org.freedesktop.secrets -o /org/freedesktop/secrets -m org.freedesktop.Secret.Service.ReadAlias default)"

if [ -x "$VENV/bin/python" ]; then
    py="$VENV/bin/python"
    # The plain session and a client's own secrets, through secretstorage (jeepney).
    out=$("$py" - <<'EOF' 2>&1
import secretstorage
from secretstorage.dhcrypto import Session
from secretstorage.util import DBusAddressWrapper
from jeepney.wrappers import Properties
conn = secretstorage.dbus_init()
# A plain session, by hand: OpenSession("plain") and GetSecret with it.
service = DBusAddressWrapper('/org/freedesktop/secrets', 'org.freedesktop.Secret.Service', conn)
output, path = service.call('OpenSession', 'sv', 'plain', ('s', ''))
item = DBusAddressWrapper(next(iter(secretstorage.search_items(conn, {'plain': 'yes'}))).item_path, 'org.freedesktop.Secret.Item', conn)
secret, = item.call('GetSecret', 'o', path)
print('plain', bytes(secret[2]).decode())
# A dh session whose shared secret has a leading zero byte (1 in 256): the
# secret is padded to 128 bytes on both sides, or the keys differ.
from secretstorage.dhcrypto import Session, DH_PRIME_1024
from cryptography.hazmat.primitives.ciphers import Cipher, algorithms, modes
for attempt in range(4000):
    s = Session()
    out, spath = service.call('OpenSession', 'sv', 'dh-ietf1024-sha256-aes128-cbc-pkcs7', ('ay', s.my_public_key.to_bytes(128, 'big')))
    server = int.from_bytes(bytes(out[1]), 'big')
    if pow(server, s.my_private_key, DH_PRIME_1024).bit_length() > 1016:
        DBusAddressWrapper(spath, 'org.freedesktop.Secret.Session', conn).call('Close', '')
        continue
    s.set_server_public_key(server)
    (_, params, value, _), = item.call('GetSecret', 'o', spath)
    d = Cipher(algorithms.AES(s.aes_key), modes.CBC(bytes(params))).decryptor()
    plain = d.update(bytes(value)) + d.finalize()
    print('short dh secret', plain[:-plain[-1]].decode(errors='replace'))
    break
col = secretstorage.get_default_collection(conn)
it = col.create_item('SS', {'service': 'ss-svc', 'username': 'ss-user'}, b'ss-pass', replace=True)
print('search', [i.get_secret().decode() for i in col.search_items({'service': 'ss-svc'})])
# The session collection: kept in memory, never in the keychain.
sess = secretstorage.Collection(conn, '/org/freedesktop/secrets/collection/session')
sess.create_item('Mem', {'mem': 'only'}, b'mem-pass')
print('session', [i.get_secret().decode() for i in secretstorage.search_items(conn, {'mem': 'only'})])
# A client that sends CreateItem and leaves before the reply.
from jeepney import new_method_call, DBusAddress
from jeepney.io.blocking import open_dbus_connection
gone = open_dbus_connection(bus='SESSION')
gone_session = gone.send_and_get_reply(new_method_call(DBusAddress('/org/freedesktop/secrets', 'org.freedesktop.secrets', 'org.freedesktop.Secret.Service'),
                                                       'OpenSession', 'sv', ('plain', ('s', '')))).body[1]
gone.send(new_method_call(DBusAddress('/org/freedesktop/secrets/aliases/default', 'org.freedesktop.secrets', 'org.freedesktop.Secret.Collection'),
                          'CreateItem', 'a{sv}(oayays)b',
                          ({'org.freedesktop.Secret.Item.Label': ('s', 'Gone')}, (gone_session, b'', b'gone-pass', 'text/plain'), True)))
gone.close()
try:
    col.create_item('big', {'x': 'y'}, b'x' * (2 << 20))
    print('big accepted')
except Exception as e:
    print('big refused', type(e).__name__, str(e)[:80])
try:
    col.create_item('many', {('k%d' % i): 'v' for i in range(200)}, b'x')
    print('many accepted')
except Exception as e:
    print('many refused', str(e)[:80])
EOF
)
    case "$out" in *"plain plainvalue"*) ok "secretstorage: plain session";; *) fail "secretstorage plain: $out";; esac
    case "$out" in *"short dh secret plainvalue"*) ok "dh: a shared secret with a leading zero byte";; *) fail "dh short secret: $out";; esac
    case "$out" in *"search ['ss-pass']"*) ok "secretstorage: create and search";; *) fail "secretstorage search: $out";; esac
    case "$out" in *"big refused"*LimitsExceeded*|*"big refused"*"at most"*) ok "a 2 MB secret is refused";; *) fail "big secret: $out";; esac
    case "$out" in *"many refused"*) ok "200 attributes are refused";; *) fail "many attributes: $out";; esac
    case "$(sec dump-keychain)" in *'"big"'*|*'"many"'*) fail "a refused item was written";; *) ok "refused items leave nothing written";; esac
    check "secretstorage item seen by security" "ss-pass" "$(sec find-generic-password -s ss-svc -a ss-user -w)"
    case "$out" in *"session ['mem-pass']"*) ok "the session collection";; *) fail "session collection: $out";; esac
    case "$(sec dump-keychain)" in *mem-pass*|*'"mem"'*) fail "a session item reached the keychain";; *) ok "session items stay in memory";; esac
    kill -0 $pid 2>/dev/null && ok "a client leaving mid-call leaves the service running" || fail "the service died"

    # Errors by their names, attribute values as bytes, the size limit, and
    # another client answered while one pipelines 300 CreateItem calls.
    out=$("$py" - <<'EOF' 2>&1
import threading, time, unicodedata
import secretstorage
from jeepney import new_method_call, DBusAddress, Properties, MessageType
from jeepney.io.blocking import open_dbus_connection
conn = open_dbus_connection(bus='SESSION')
def call(path, interface, method, signature=None, body=()):
    r = conn.send_and_get_reply(new_method_call(DBusAddress(path, 'org.freedesktop.secrets', interface), method, signature, body))
    return (r.header.fields.get(4), r.body) if r.header.message_type == MessageType.error else (None, r.body)
ITEM = 'org.freedesktop.Secret.Item'
PROPS = 'org.freedesktop.DBus.Properties'
_, (_, plain) = call('/org/freedesktop/secrets', 'org.freedesktop.Secret.Service', 'OpenSession', 'sv', ('plain', ('s', '')))
def create(collection, attrs, secret, replace=False, label='x'):
    return call(collection, 'org.freedesktop.Secret.Collection', 'CreateItem', 'a{sv}(oayays)b',
                ({'org.freedesktop.Secret.Item.Label': ('s', label), 'org.freedesktop.Secret.Item.Attributes': ('a{ss}', attrs)},
                 (plain, b'', secret, 'text/plain'), replace))
login, session = '/org/freedesktop/secrets/collection/login', '/org/freedesktop/secrets/collection/session'
for col in (login, session):
    name = col.rsplit('/', 1)[1]
    err, (path, _) = create(col, {'errs': name}, b'e')
    call(path, ITEM, 'Delete')
    unknown = col + '/' + ('0' * 32 if col == login else '999999')
    for what, p in (('deleted', path), ('unknown', unknown)):
        print(name, what, 'Get', call(p, PROPS, 'Get', 'ss', (ITEM, 'Label'))[0])
        print(name, what, 'Set', call(p, PROPS, 'Set', 'ssv', (ITEM, 'Label', ('s', 'y')))[0])
        print(name, what, 'GetAll', call(p, PROPS, 'GetAll', 's', (ITEM,)))
    # NFC and NFD "cafe" are two values: each search finds its own item, and
    # a replace of one leaves the other's secret.
    nfc, nfd = unicodedata.normalize('NFC', 'caf\u00e9'), unicodedata.normalize('NFD', 'caf\u00e9')
    assert nfc.encode() != nfd.encode()
    create(col, {'nf': nfc}, b'nfc-secret')
    create(col, {'nf': nfd}, b'nfd-secret', replace=True)
    _, (found,) = call(col, 'org.freedesktop.Secret.Collection', 'SearchItems', 'a{ss}', ({'nf': nfc},))
    secrets = [bytes(call(f, ITEM, 'GetSecret', 'o', (plain,))[1][0][2]) for f in found]
    print(name, 'nfc search', len(found), secrets)
    _, (found,) = call(col, 'org.freedesktop.Secret.Collection', 'SearchItems', 'a{ss}', ({'nf': nfd},))
    print(name, 'nfd search', len(found), [bytes(call(f, ITEM, 'GetSecret', 'o', (plain,))[1][0][2]) for f in found])
    print(name, 'big', create(col, {'big': 'yes'}, b'x' * ((1 << 20) + 1))[0])
    print(name, 'at the limit', create(col, {'big': 'limit'}, b'x' * (1 << 20))[0])
# Fairness: one client pipelines 300 CreateItem calls; another's ReadAlias is
# answered while most of them still wait (before: behind all of them).
flood = open_dbus_connection(bus='SESSION')
fs = flood.send_and_get_reply(new_method_call(DBusAddress('/org/freedesktop/secrets', 'org.freedesktop.secrets', 'org.freedesktop.Secret.Service'),
                                              'OpenSession', 'sv', ('plain', ('s', '')))).body[1]
replies = []
def reader():
    while len(replies) < 300:
        flood.receive(); replies.append(time.monotonic())
t = threading.Thread(target=reader); t.start()
for n in range(300):
    flood.send(new_method_call(DBusAddress(login, 'org.freedesktop.secrets', 'org.freedesktop.Secret.Collection'), 'CreateItem', 'a{sv}(oayays)b',
                               ({'org.freedesktop.Secret.Item.Attributes': ('a{ss}', {'pipelined': str(n)})}, (fs, b'', b'p', 'text/plain'), True)))
while not replies: time.sleep(0.001)
start = time.monotonic()
call('/org/freedesktop/secrets', 'org.freedesktop.Secret.Service', 'ReadAlias', 's', ('default',))
answered = time.monotonic()
t.join()
print('flood replies after ReadAlias', sum(1 for r in replies if r > answered), 'waited %.0f ms' % ((answered - start) * 1000))
EOF
)
    for col in login session; do
        for what in deleted unknown; do
            for m in Get Set GetAll; do
                case "$out" in *"$col $what $m org.freedesktop.Secret.Error.NoSuchObject"*|*"$col $what $m ('org.freedesktop.Secret.Error.NoSuchObject'"*) ok "$col: $m on a $what item: NoSuchObject";;
                    *) fail "$col: $m on a $what item: $(echo "$out" | grep "$col $what $m" || echo "$out")";; esac
            done
        done
        case "$out" in *"$col nfc search 1 [b'nfc-secret']"*) ok "$col: NFC and NFD values are two (search, replace)";; *) fail "$col NFC/NFD: $(echo "$out" | grep "$col nf" || echo "$out")";; esac
        case "$out" in *"$col nfd search 1 [b'nfd-secret']"*) ok "$col: the NFD item is its own";; *) fail "$col NFD: $(echo "$out" | grep "$col nfd")";; esac
        case "$out" in *"$col big org.freedesktop.DBus.Error.LimitsExceeded"*) ok "$col: 1 MiB + 1 is LimitsExceeded";; *) fail "$col 1 MiB + 1: $(echo "$out" | grep "$col big")";; esac
        case "$out" in *"$col at the limit None"*) ok "$col: 1 MiB is kept";; *) fail "$col 1 MiB: $(echo "$out" | grep "$col at the")";; esac
    done
    n=$(echo "$out" | sed -n 's/^flood replies after ReadAlias \([0-9]*\).*/\1/p')
    [ -n "$n" ] && [ "$n" -ge 200 ] && ok "another client is answered during a 300-call pipeline ($(echo "$out" | grep '^flood'))" \
        || fail "fairness: $(echo "$out" | grep '^flood' || echo "$out")"
    out=$(secret-tool search --all pipelined 0 2>&1)
    case "$out" in *"attribute.pipelined = 0"*) ok "the pipelined items were stored";; *) fail "pipelined items: $out";; esac

    # keyring's SecretService backend.
    kr() { "$VENV/bin/keyring" -b keyring.backends.SecretService.Keyring "$@"; }
    printf 'kr-pass\n' | kr set kr-svc kr-user || fail "keyring set"
    check "keyring get" "kr-pass" "$(kr get kr-svc kr-user)"
    check "keyring item seen by security" "kr-pass" "$(sec find-generic-password -s kr-svc -a kr-user -w)"
    printf 'sec-pass\n' | sec add-generic-password -s sec-svc -a sec-user
    check "security item seen by keyring" "sec-pass" "$(kr get sec-svc sec-user)"
    kr del kr-svc kr-user || fail "keyring del"
    sec find-generic-password -s kr-svc -a kr-user >/dev/null 2>&1 && fail "keyring del left the item" || ok "keyring del"
else
    fail "no Python venv at $VENV (scripts/python-keyring-venv.sh)"
fi

# git credential with git-credential-libsecret.
g() { git -c credential.helper= -c credential.helper="$helper" credential "$@"; }
printf 'protocol=https\nhost=git.example.com\nusername=bob\npassword=bob-pass\n\n' | g approve || fail "git approve"
check "git item seen by security" "bob-pass" "$(sec find-internet-password -s git.example.com -a bob -r htps -w)"
out=$(printf 'protocol=https\nhost=git.example.com\n\n' | GIT_TERMINAL_PROMPT=0 g fill 2>&1)
case "$out" in *"username=bob"*"password=bob-pass"*) ok "git credential fill";; *) fail "git fill: $out";; esac
printf 'alice-pass\n' | sec add-internet-password -s forge.example.org -a alice -r htps
out=$(printf 'protocol=https\nhost=forge.example.org\n\n' | GIT_TERMINAL_PROMPT=0 g fill 2>&1)
case "$out" in *"username=alice"*"password=alice-pass"*) ok "security internet password seen by git";; *) fail "git fill of security's item: $out";; esac
printf 'protocol=https\nhost=git.example.com\nusername=bob\npassword=bob-pass\n\n' | g reject
sec find-internet-password -s git.example.com -a bob >/dev/null 2>&1 && fail "git reject left the item" || ok "git credential reject"

# docker-credential-secretservice.
if command -v docker-credential-secretservice >/dev/null; then
    printf '{"ServerURL":"https://registry.example.com","Username":"dock","Secret":"dock-pass"}' | docker-credential-secretservice store || fail "docker store"
    out=$(printf 'https://registry.example.com' | docker-credential-secretservice get)
    case "$out" in *'"Secret":"dock-pass"'*) ok "docker get";; *) fail "docker get: $out";; esac
    out=$(docker-credential-secretservice list)
    case "$out" in *registry.example.com*) ok "docker list";; *) fail "docker list: $out";; esac
    case "$(sec dump-keychain)" in *io.docker.Credentials*) ok "docker item seen by security";; *) fail "docker item not in dump-keychain";; esac
    printf 'https://registry.example.com' | docker-credential-secretservice erase || fail "docker erase"
    printf 'https://registry.example.com' | docker-credential-secretservice get >/dev/null 2>&1 && fail "docker erase left it" || ok "docker erase"
else
    fail "docker-credential-secretservice is missing (golang-docker-credential-helpers)"
fi

# Locking: security lock-keychain closes it for every client; a prompt ends dismissed.
printf 'lockme' | secret-tool store --label=Lock lock test
sec lock-keychain || fail "lock-keychain"
out=$("$VENV/bin/keyring" -b keyring.backends.SecretService.Keyring get sec-svc sec-user 2>&1); rc=$?
[ $rc -ne 0 ] && [ "$out" != "sec-pass" ] && ok "keyring sees the keychain locked" || fail "keyring on a locked keychain: rc $rc '$out'"
out=$(printf 'protocol=https\nhost=forge.example.org\n\n' | g fill 2>&1)
case "$out" in *alice-pass*) fail "git read a locked keychain: $out";; *) ok "git sees the keychain locked";; esac
check "Locked after lock-keychain" "(<true>,)" \
    "$(gdbus call --session -d org.freedesktop.secrets -o /org/freedesktop/secrets/aliases/default -m org.freedesktop.DBus.Properties.Get org.freedesktop.Secret.Collection Locked)"
out=$(timeout 10 secret-tool lookup lock test 2>&1); rc=$?
[ $rc -ne 0 ] && [ "$out" != "lockme" ] && ok "secret-tool lookup of a locked item finds nothing (prompt dismissed)" || fail "locked lookup: rc $rc '$out'"
lockitem=$(gdbus call --session -d org.freedesktop.secrets -o /org/freedesktop/secrets -m org.freedesktop.Secret.Service.SearchItems "{'lock': 'test'}" | grep -o "/org/freedesktop/secrets/collection/login/[0-9a-f]*" | head -1)
# (The error's name on the wire, which gdbus does not print: secretstorage reads it.)
out=$("$VENV/bin/python" - "$lockitem" <<'EOF' 2>&1
import sys
from jeepney import new_method_call, DBusAddress
from jeepney.io.blocking import open_dbus_connection
r = open_dbus_connection(bus='SESSION').send_and_get_reply(new_method_call(
    DBusAddress(sys.argv[1], 'org.freedesktop.secrets', 'org.freedesktop.DBus.Properties'), 'Set', 'ssv',
    ('org.freedesktop.Secret.Item', 'Label', ('s', 'changed'))))
print(r.header.fields.get(4))
EOF
)
check "Set while locked: IsLocked" "org.freedesktop.Secret.Error.IsLocked" "$out"
out=$(gdbus call --session -d org.freedesktop.secrets -o /org/freedesktop/secrets -m org.freedesktop.Secret.Service.Unlock "['/org/freedesktop/secrets/collection/login']")
case "$out" in *"/org/freedesktop/secrets/prompt/"*) ok "Unlock of a locked collection returns a prompt";; *) fail "Unlock: $out";; esac
printf 'pass phrase\n' | sec unlock-keychain || fail "unlock-keychain"
check "lookup after unlock-keychain" "lockme" "$(secret-tool lookup lock test)"
gdbus call --session -d org.freedesktop.secrets -o /org/freedesktop/secrets -m org.freedesktop.Secret.Service.Lock "['/org/freedesktop/secrets/collection/login']" >/dev/null
case "$(sec show-keychain-info)" in *locked*) ok "Service.Lock locks it for security too";; *) fail "Lock over D-Bus";; esac
printf 'pass phrase\n' | sec unlock-keychain

# Other clients are answered while one floods CreateItem.
( for n in $(seq 1 100); do printf 'f' | secret-tool store --label=F flood yes n "$n" 2>>"$tmp/flood.err"; done ) &
flood=$!
check "answered during a flood" "lockme" "$(secret-tool lookup lock test)"
wait $flood
check "the flood's items" "100" "$(secret-tool search --all flood yes 2>/dev/null | grep -c '^label')"
[ -s "$tmp/flood.err" ] && fail "flood errors: $(head -3 "$tmp/flood.err")"

kill $pid 2>/dev/null
wait $pid 2>/dev/null

# D-Bus activation: a bus whose service directory holds the installed activation
# file (Exec pointed at this build) starts apphome-secretd on the first call.
mkdir -p "$tmp/services"
printf '#!/bin/sh\nexec "%s/apphome-secretd" --root "%s" 2>>"%s/activated.log"\n' "$BIN" "$APPHOME_ROOT" "$tmp" > "$tmp/start-secretd"
chmod +x "$tmp/start-secretd"
sed "s|^Exec=.*|Exec=$tmp/start-secretd|" "$here/examples/dbus/org.freedesktop.secrets.apphome.service" > "$tmp/services/org.freedesktop.secrets.apphome.service"
cat > "$tmp/bus.conf" <<CONF
<busconfig>
  <type>session</type>
  <listen>unix:path=$tmp/bus</listen>
  <servicedir>$tmp/services</servicedir>
  <policy context="default"><allow send_destination="*" eavesdrop="true"/><allow eavesdrop="true"/><allow own="*"/></policy>
</busconfig>
CONF
dbus-daemon --config-file="$tmp/bus.conf" --fork --print-pid=1 > "$tmp/bus.pid" 2>/dev/null
check "activated by the first call" "lockme" "$(DBUS_SESSION_BUS_ADDRESS=unix:path=$tmp/bus timeout 20 secret-tool lookup lock test)"
DBUS_SESSION_BUS_ADDRESS=unix:path=$tmp/bus gdbus call --session -d org.freedesktop.DBus -o /org/freedesktop/DBus \
    -m org.freedesktop.DBus.GetConnectionUnixProcessID org.freedesktop.secrets > "$tmp/activated.pid" 2>&1
# The provider first, so that its parent, the bus, reaps it; then the bus.
activated=$(sed -n 's/.*uint32 \([0-9]*\).*/\1/p' "$tmp/activated.pid")
[ -n "$activated" ] && kill "$activated" 2>/dev/null && sleep 0.2
kill "$(tr -cd 0-9 < "$tmp/bus.pid")" 2>/dev/null
echo "failures: $fails"
exit $fails
