/*
 * objstore/xml: a minimal scanner for the small XML documents storage servers answer
 * (S3 ListObjectsV2, InitiateMultipartUpload, Error; Azure EnumerationResults, Error).
 *
 *   struct objstore_xml_span doc = { body, len }, item;
 *   size_t pos = 0;
 *   char key[OBJSTORE_KEY_MAX + 1];
 *   while (objstore_xml_next(doc, &pos, "Contents", &item) == 0)
 *           if (objstore_xml_child(item, "Key", key, sizeof(key)) == 0) ...
 *
 * It knows start and end tags, attributes (skipped, quotes honoured), self-closing
 * elements, comments, processing instructions and CDATA sections (skipped), and the five
 * named entities plus numeric character references. It does not know namespaces
 * (prefixes are part of the name), DTDs, or an element nested in one of the same name;
 * none of these occur in the documents above. Malformed input is -EPROTO, never a read
 * past len: the input need not be NUL-terminated.
 * Pure functions over (ptr, len); any thread.
 */
#ifndef REDIS_OPERATOR_OBJSTORE_XML_H
#define REDIS_OPERATOR_OBJSTORE_XML_H

#include <stddef.h>

struct objstore_xml_span {
	const char *p; /* borrowed */
	size_t len;
};

/*
 * Finds the next element called name at or after *pos in doc, at any depth. On success
 * *inner is its content (empty for <name/>) and *pos is just past its end tag.
 * 0, -ENOENT (no more), or -EPROTO (unterminated tag, comment or element).
 */
int objstore_xml_next(struct objstore_xml_span doc, size_t *pos, const char *name,
                      struct objstore_xml_span *inner);

/*
 * Decodes text content (entities resolved, surrounding whitespace kept) into out, which
 * is always NUL-terminated when cap > 0. 0, -EMSGSIZE (does not fit), or -EPROTO (an
 * unknown or unterminated entity, a character reference that is not valid UTF-8 text,
 * or markup inside the text).
 */
int objstore_xml_text(struct objstore_xml_span s, char *out, size_t cap);

/* The decoded text of the first element called name inside s: next + text. */
int objstore_xml_child(struct objstore_xml_span s, const char *name, char *out, size_t cap);

#endif
