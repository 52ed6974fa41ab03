// libsoup 3 (GNOME's HTTP library), imported only by the SettingsServer target.
// Its umbrella header includes its parts as <libsoup/…>, which needs
// -I/usr/include/libsoup-3.0, a flag a system library target cannot add (and
// libsoup-3.0.pc adds -pthread, which SwiftPM refuses with a warning): the
// parts the server uses are included by path instead; they include each other
// with quotes. glib-2.0's pkg-config gives GLib's include paths.
#include <gio/gio.h>
#include <gio/gunixsocketaddress.h>
#include <glib-unix.h>
#include "/usr/include/libsoup-3.0/libsoup/soup-types.h"
#include "/usr/include/libsoup-3.0/libsoup/soup-status.h"
#include "/usr/include/libsoup-3.0/libsoup/soup-method.h"
#include "/usr/include/libsoup-3.0/libsoup/soup-message-headers.h"
#include "/usr/include/libsoup-3.0/libsoup/soup-message-body.h"
#include "/usr/include/libsoup-3.0/libsoup/soup-server.h"
#include "/usr/include/libsoup-3.0/libsoup/soup-server-message.h"
#include "/usr/include/libsoup-3.0/libsoup/soup-websocket.h"
#include "/usr/include/libsoup-3.0/libsoup/soup-websocket-connection.h"

/// A server that names itself "AppHome" (soup_server_new is variadic).
static inline SoupServer *apphome_soup_server_new(void) {
    return soup_server_new("server-header", "AppHome", NULL);
}

/// Connects `handler` to `signal` of `instance` (g_signal_connect is a macro).
static inline gulong apphome_signal_connect(gpointer instance, const char *signal, GCallback handler, gpointer data) {
    return g_signal_connect_data(instance, signal, handler, data, NULL, 0);
}

/// The peer's process id on a Unix socket (SO_PEERCRED), or -1.
static inline int apphome_socket_peer_pid(GSocket *socket) {
    GCredentials *credentials = g_socket_get_credentials(socket, NULL);
    if (credentials == NULL) return -1;
    pid_t pid = g_credentials_get_unix_pid(credentials, NULL);
    g_object_unref(credentials);
    return (int)pid;
}
