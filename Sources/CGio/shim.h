// GLib's GDBus (gio-2.0), imported only by the SecretServiceProvider target.
// GVariant type strings are macros (G_VARIANT_TYPE) and some calls are
// variadic, which Swift cannot call: these helpers take plain C strings.
#include <gio/gio.h>
#include <glib-unix.h>

/// A heap builder for a container of type `type` ("ao", "a{ss}", "a{sv}"...).
static inline GVariantBuilder *apphome_builder_new(const char *type) {
    return g_variant_builder_new(G_VARIANT_TYPE(type));
}

/// Ends `builder` (freeing it) and returns the floating value.
static inline GVariant *apphome_builder_finish(GVariantBuilder *builder) {
    GVariant *v = g_variant_builder_end(builder);
    g_variant_builder_unref(builder);
    return v;
}

/// An empty array of type `type` ("ao").
static inline GVariant *apphome_empty_array(const char *element_type) {
    return g_variant_new_array(G_VARIANT_TYPE(element_type), NULL, 0);
}

/// A byte array (`ay`) holding a copy of `data`.
static inline GVariant *apphome_bytes(const void *data, gsize length) {
    return g_variant_new_fixed_array(G_VARIANT_TYPE_BYTE, length ? data : "", length, 1);
}

/// Whether `value` has the type `type`.
static inline gboolean apphome_is(GVariant *value, const char *type) {
    return g_variant_is_of_type(value, G_VARIANT_TYPE(type));
}

/// A GError with a D-Bus error name, for a property setter.
static inline void apphome_set_dbus_error(GError **error, const char *name, const char *message) {
    g_dbus_error_set_dbus_error(error, name, message, NULL);
}

/// The subtree vtable: enumerate, introspect, dispatch (allocated once, never freed).
static inline GDBusSubtreeVTable *apphome_subtree_vtable(GDBusSubtreeEnumerateFunc enumerate,
                                                         GDBusSubtreeIntrospectFunc introspect,
                                                         GDBusSubtreeDispatchFunc dispatch) {
    GDBusSubtreeVTable *v = g_new0(GDBusSubtreeVTable, 1);
    v->enumerate = enumerate;
    v->introspect = introspect;
    v->dispatch = dispatch;
    return v;
}

/// An interface vtable (allocated once, never freed).
static inline GDBusInterfaceVTable *apphome_interface_vtable(GDBusInterfaceMethodCallFunc method,
                                                             GDBusInterfaceGetPropertyFunc get,
                                                             GDBusInterfaceSetPropertyFunc set) {
    GDBusInterfaceVTable *v = g_new0(GDBusInterfaceVTable, 1);
    v->method_call = method;
    v->get_property = get;
    v->set_property = set;
    return v;
}
