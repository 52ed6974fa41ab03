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
