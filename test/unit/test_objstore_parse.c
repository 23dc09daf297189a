/*
 * Unit tests for the pure parts of lib/objstore: Azure connection strings (good and
 * malformed, the error naming the field), the XML scanner on S3 and Azure list and error
 * documents (and malformed ones), URLs and keys, block ids, part arithmetic.
 */
#include <errno.h>
#include <string.h>

#include "lib/objstore/connstr.h"
#include "lib/objstore/objstore.h"
#include "lib/objstore/url.h"
#include "lib/objstore/xml.h"
#include "unit.h"

#define KEY64                                                                                      \
	"Eby8vdM02xNOcqFlqUwJPLlmEtlCDXJ1OUzFT50uSRZ6IFsuFq2UVErCz4I6tq/K1SZFPTOtr/KBHBeksoGMGw=="

/* ---- connection strings ---------------------------------------------------------- */

static const struct {
	const char *in;
	const char *account, *endpoint, *sas;
	size_t key_len;
} connstr_good[] = {
	{ "DefaultEndpointsProtocol=https;AccountName=acct;AccountKey=" KEY64
	  ";EndpointSuffix=core.windows.net",
	  "acct", "https://acct.blob.core.windows.net", NULL, 64 },
	{ "AccountName=acct;AccountKey=" KEY64, "acct", "https://acct.blob.core.windows.net", NULL,
	  64 },
	{ "DefaultEndpointsProtocol=http;AccountName=a;AccountKey=" KEY64
	  ";EndpointSuffix=core.chinacloudapi.cn;",
	  "a", "http://a.blob.core.chinacloudapi.cn", NULL, 64 },
	{ "BlobEndpoint=http://10.0.0.7:10000/devstoreaccount1/;AccountName=devstoreaccount1;"
	  "AccountKey=" KEY64 ";QueueEndpoint=http://10.0.0.7:10001/devstoreaccount1",
	  "devstoreaccount1", "http://10.0.0.7:10000/devstoreaccount1", NULL, 64 },
	{ "BlobEndpoint=https://acct.blob.core.windows.net;SharedAccessSignature=sv=2020-10-02&"
	  "ss=b&sig=abc%3D",
	  "acct", "https://acct.blob.core.windows.net", "sv=2020-10-02&ss=b&sig=abc%3D", 0 },
	{ "blobendpoint=https://x.example;sharedaccesssignature=?sig=1", NULL, "https://x.example",
	  "sig=1", 0 },
	{ "UseDevelopmentStorage=true", "devstoreaccount1",
	  "http://127.0.0.1:10000/devstoreaccount1", NULL, 64 },
};

START_TEST(connstr_parses)
{
	struct objstore_connstr c;
	struct err e;

	err_clear(&e);
	ck_assert_msg(objstore_connstr_parse(connstr_good[_i].in, &c, &e) == 0, "%s", e.msg);
	if (connstr_good[_i].account)
		ck_assert_str_eq(c.account, connstr_good[_i].account);
	else
		ck_assert_ptr_null(c.account);
	ck_assert_str_eq(c.blob_endpoint, connstr_good[_i].endpoint);
	if (connstr_good[_i].sas)
		ck_assert_str_eq(c.sas, connstr_good[_i].sas);
	else
		ck_assert_ptr_null(c.sas);
	ck_assert_uint_eq(c.key_len, connstr_good[_i].key_len);
	objstore_connstr_release(&c);
}
END_TEST

static const struct {
	const char *in;
	const char *msg; /* a part of the message */
} connstr_bad[] = {
	{ "", "empty" },
	{ "AccountName=a;AccountKey", "segment 2 has no name=value" },
	{ "=x;AccountName=a", "segment 1 has no name=value" },
	{ "AccountName=a;AccountKey=" KEY64 ";AccountName=b", "AccountName given twice" },
	{ "AccountName=a;AccountKey=not*base64", "AccountKey is not base64" },
	{ "AccountName=a;AccountKey=abc", "AccountKey is not base64" },
	{ "AccountName=a", "needs AccountKey or SharedAccessSignature" },
	{ "AccountKey=" KEY64, "AccountKey needs AccountName" },
	{ "SharedAccessSignature=sig=1", "needs BlobEndpoint or AccountName" },
	{ "DefaultEndpointsProtocol=ftp;AccountName=a;AccountKey=" KEY64,
	  "DefaultEndpointsProtocol must be http or https" },
	{ "BlobEndpoint=10.0.0.1:10000;AccountName=a;AccountKey=" KEY64,
	  "BlobEndpoint must start with http:// or https://" },
	{ "AccountName=;AccountKey=" KEY64, "AccountName is empty" },
	{ "AccountName=a;AccountKey=" KEY64 ";EndpointSuffix=", "EndpointSuffix is empty" },
	{ "UseDevelopmentStorage=false", "UseDevelopmentStorage must be true" },
	{ "UseDevelopmentStorage=true;AccountName=x", "AccountName not allowed" },
};

START_TEST(connstr_rejects)
{
	struct objstore_connstr c;
	struct err e;

	err_clear(&e);
	ck_assert_int_eq(objstore_connstr_parse(connstr_bad[_i].in, &c, &e), -EINVAL);
	ck_assert_msg(strstr(e.msg, connstr_bad[_i].msg), "%s: got \"%s\"", connstr_bad[_i].in,
	              e.msg);
	ck_assert_ptr_null(strstr(e.msg, "Eby8")); /* never the key */
	ck_assert_ptr_null(c.account);
	ck_assert_ptr_null(c.key);
	ck_assert_ptr_null(c.blob_endpoint);
}
END_TEST

/* ---- XML ------------------------------------------------------------------------- */

static const char s3_list[] =
        "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n"
        "<ListBucketResult xmlns=\"http://s3.amazonaws.com/doc/2006-03-01/\">"
        "<Name>backups</Name><Prefix>prod/</Prefix><KeyCount>2</KeyCount>"
        "<MaxKeys>1000</MaxKeys><IsTruncated>true</IsTruncated>"
        "<Contents><Key>prod/a&amp;b.rdb</Key><LastModified>2024-01-02T03:04:05.000Z</LastModified>"
        "<ETag>&quot;9b2cf535f27731c974343645a3985328&quot;</ETag><Size>41943040</Size>"
        "<StorageClass>STANDARD</StorageClass></Contents>"
        "<!-- a comment <Contents> -->"
        "<Contents><Key>prod/&#x00e9;t&#233;</Key><Size>0</Size></Contents>"
        "<NextContinuationToken>1ueGcxLPRx1Tr/XYExHnhbYLgveDs2J/wm36Hy4vbOwM=</"
        "NextContinuationToken>"
        "</ListBucketResult>";

START_TEST(xml_s3_list)
{
	struct objstore_xml_span doc = { s3_list, sizeof(s3_list) - 1 }, item;
	char key[64], v[128];
	size_t pos = 0;

	ck_assert_int_eq(objstore_xml_next(doc, &pos, "Contents", &item), 0);
	ck_assert_int_eq(objstore_xml_child(item, "Key", key, sizeof(key)), 0);
	ck_assert_str_eq(key, "prod/a&b.rdb");
	ck_assert_int_eq(objstore_xml_child(item, "ETag", v, sizeof(v)), 0);
	ck_assert_str_eq(v, "\"9b2cf535f27731c974343645a3985328\"");
	ck_assert_int_eq(objstore_xml_child(item, "Size", v, sizeof(v)), 0);
	ck_assert_str_eq(v, "41943040");
	ck_assert_int_eq(objstore_xml_next(doc, &pos, "Contents", &item), 0);
	ck_assert_int_eq(objstore_xml_child(item, "Key", key, sizeof(key)), 0);
	ck_assert_str_eq(key, "prod/\xc3\xa9t\xc3\xa9");
	ck_assert_int_eq(objstore_xml_child(item, "ETag", v, sizeof(v)), -ENOENT);
	ck_assert_int_eq(objstore_xml_next(doc, &pos, "Contents", &item), -ENOENT);
	ck_assert_int_eq(objstore_xml_child(doc, "IsTruncated", v, sizeof(v)), 0);
	ck_assert_str_eq(v, "true");
	ck_assert_int_eq(objstore_xml_child(doc, "NextContinuationToken", v, sizeof(v)), 0);
	ck_assert_str_eq(v, "1ueGcxLPRx1Tr/XYExHnhbYLgveDs2J/wm36Hy4vbOwM=");
	/* "Name" is not "NameX", nor the start of a longer tag name. */
	ck_assert_int_eq(objstore_xml_child(doc, "Nam", v, sizeof(v)), -ENOENT);
	ck_assert_int_eq(objstore_xml_child(doc, "Key", v, 4), -EMSGSIZE);
}
END_TEST

static const char azure_list[] =
        "\xef\xbb\xbf<?xml version=\"1.0\" encoding=\"utf-8\"?>"
        "<EnumerationResults ServiceEndpoint=\"http://127.0.0.1:10000/devstoreaccount1\" "
        "ContainerName=\"backups\"><Prefix>prod/</Prefix><MaxResults>2</MaxResults><Blobs>"
        "<Blob><Name>prod/x.rdb</Name><Properties><Last-Modified>Tue, 02 Jan 2024 03:04:05 GMT"
        "</Last-Modified><Etag>0x8DC0B6C8E7A0F1B</Etag><Content-Length>123</Content-Length>"
        "<Content-Type>application/octet-stream</Content-Type><BlobType>BlockBlob</BlobType>"
        "</Properties><OrMetadata /></Blob>"
        "<Blob><Name>prod/y.rdb</Name><Properties><Content-Length>0</Content-Length>"
        "</Properties></Blob></Blobs><NextMarker>2!88!MDAwMDE1IXByb2QveS5yZGI-</NextMarker>"
        "</EnumerationResults>";

START_TEST(xml_azure_list)
{
	struct objstore_xml_span doc = { azure_list, sizeof(azure_list) - 1 }, blob, props;
	char v[128];
	size_t pos = 0, ppos = 0;

	ck_assert_int_eq(objstore_xml_next(doc, &pos, "Blob", &blob), 0);
	ck_assert_int_eq(objstore_xml_child(blob, "Name", v, sizeof(v)), 0);
	ck_assert_str_eq(v, "prod/x.rdb");
	ck_assert_int_eq(objstore_xml_next(blob, &ppos, "Properties", &props), 0);
	ck_assert_int_eq(objstore_xml_child(props, "Content-Length", v, sizeof(v)), 0);
	ck_assert_str_eq(v, "123");
	ck_assert_int_eq(objstore_xml_next(doc, &pos, "Blob", &blob), 0);
	ck_assert_int_eq(objstore_xml_child(blob, "Name", v, sizeof(v)), 0);
	ck_assert_str_eq(v, "prod/y.rdb");
	ck_assert_int_eq(objstore_xml_next(doc, &pos, "Blob", &blob), -ENOENT);
	ck_assert_int_eq(objstore_xml_child(doc, "NextMarker", v, sizeof(v)), 0);
	ck_assert_str_eq(v, "2!88!MDAwMDE1IXByb2QveS5yZGI-");
}
END_TEST

START_TEST(xml_empty_and_self_closing)
{
	static const char d[] = "<R><NextMarker /><Prefix></Prefix><Blobs/></R>";
	struct objstore_xml_span doc = { d, sizeof(d) - 1 };
	char v[8] = "x";

	ck_assert_int_eq(objstore_xml_child(doc, "NextMarker", v, sizeof(v)), 0);
	ck_assert_str_eq(v, "");
	ck_assert_int_eq(objstore_xml_child(doc, "Prefix", v, sizeof(v)), 0);
	ck_assert_str_eq(v, "");
	ck_assert_int_eq(objstore_xml_child(doc, "Blob", v, sizeof(v)), -ENOENT);
}
END_TEST

static const struct {
	const char *body;
	const char *code, *msg;
} error_docs[] = {
	{ "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n<Error><Code>SignatureDoesNotMatch</Code>"
	  "<Message>The request signature we calculated does not match the signature you "
	  "provided.</Message><RequestId>1</RequestId></Error>",
	  "SignatureDoesNotMatch",
	  "The request signature we calculated does not match the signature you provided." },
	{ "<Error><Code>NoSuchBucket</Code><Message>The specified bucket does not exist"
	  "</Message><BucketName>nope</BucketName></Error>",
	  "NoSuchBucket", "The specified bucket does not exist" },
	{ "\xef\xbb\xbf<?xml version=\"1.0\" encoding=\"utf-8\"?><Error><Code>ContainerNotFound"
	  "</Code><Message>The specified container does not exist.\nRequestId:5\nTime:2024"
	  "</Message></Error>",
	  "ContainerNotFound", "The specified container does not exist.\nRequestId:5\nTime:2024" },
	{ "<Error>\n  <Code>AuthenticationFailed</Code>\n  <Message>Server failed &lt;x&gt;"
	  "</Message>\n  <AuthenticationErrorDetail>sig</AuthenticationErrorDetail>\n</Error>",
	  "AuthenticationFailed", "Server failed <x>" },
};

START_TEST(xml_error_documents)
{
	struct objstore_xml_span doc = { error_docs[_i].body, strlen(error_docs[_i].body) }, err;
	char code[64], msg[256];
	size_t pos = 0;

	ck_assert_int_eq(objstore_xml_next(doc, &pos, "Error", &err), 0);
	ck_assert_int_eq(objstore_xml_child(err, "Code", code, sizeof(code)), 0);
	ck_assert_str_eq(code, error_docs[_i].code);
	ck_assert_int_eq(objstore_xml_child(err, "Message", msg, sizeof(msg)), 0);
	ck_assert_str_eq(msg, error_docs[_i].msg);
}
END_TEST

static const struct {
	const char *body;
	const char *name;
	int rc;
} xml_bad[] = {
	{ "<Error><Code>X</Code>", "Error", -EPROTO },   /* no end tag */
	{ "<Error><Code>X</Code", "Code", -EPROTO },     /* unterminated end tag */
	{ "<Error attr=\"a>b", "Error", -EPROTO },       /* unterminated quote */
	{ "<!-- open <Code>x</Code>", "Code", -EPROTO }, /* unterminated comment */
	{ "<Code>a &bogus; b</Code>", "Code", -EPROTO }, /* unknown entity */
	{ "<Code>a &amp b</Code>", "Code", -EPROTO },    /* no ';' */
	{ "<Code>&#0;</Code>", "Code", -EPROTO },        /* NUL reference */
	{ "<Code>&#xD800;</Code>", "Code", -EPROTO },    /* surrogate */
	{ "<Code>&#x110000;</Code>", "Code", -EPROTO },  /* past Unicode */
	{ "<Code>&#12a;</Code>", "Code", -EPROTO },      /* not a number */
	{ "<Code><b>x</b></Code>", "Code", -EPROTO },    /* markup in text */
	{ "", "Code", -ENOENT },
	{ "just text", "Code", -ENOENT },
	{ "<", "Code", -EPROTO },
};

START_TEST(xml_malformed)
{
	struct objstore_xml_span doc = { xml_bad[_i].body, strlen(xml_bad[_i].body) };
	char v[64];

	ck_assert_int_eq(objstore_xml_child(doc, xml_bad[_i].name, v, sizeof(v)), xml_bad[_i].rc);
}
END_TEST

/* The scanner never reads past len: a document cut at every length. */
START_TEST(xml_truncated_everywhere)
{
	for (size_t n = 0; n < sizeof(s3_list) - 1; n++) {
		char *copy = xmalloc(n ? n : 1);
		struct objstore_xml_span doc = { copy, n }, item;
		size_t pos = 0;
		char key[64];

		memcpy(copy, s3_list, n);
		while (objstore_xml_next(doc, &pos, "Contents", &item) == 0)
			(void)objstore_xml_child(item, "Key", key, sizeof(key));
		free(copy);
	}
}
END_TEST

/* ---- URLs, keys ------------------------------------------------------------------ */

static const struct {
	const char *in;
	int rc;
	const char *scheme, *host, *path;
} endpoints[] = {
	{ "https://s3.eu-west-1.amazonaws.com", 0, "https", "s3.eu-west-1.amazonaws.com", "" },
	{ "http://10.0.0.7:7070/", 0, "http", "10.0.0.7:7070", "" },
	{ "http://10.0.0.7:10000/devstoreaccount1//", 0, "http", "10.0.0.7:10000",
	  "/devstoreaccount1" },
	{ "http://[::1]:9000/a/b", 0, "http", "[::1]:9000", "/a/b" },
	{ "ftp://x", -EINVAL, NULL, NULL, NULL },
	{ "https://", -EINVAL, NULL, NULL, NULL },
	{ "https:///x", -EINVAL, NULL, NULL, NULL },
	{ "https://h/x?sig=1", -EINVAL, NULL, NULL, NULL },
	{ "https://user:pw@h", -EINVAL, NULL, NULL, NULL },
	{ "", -EINVAL, NULL, NULL, NULL },
};

START_TEST(url_endpoint)
{
	struct objstore_endpoint ep;
	struct err e;

	err_clear(&e);
	ck_assert_int_eq(objstore_url_endpoint(endpoints[_i].in, &ep, &e), endpoints[_i].rc);
	if (endpoints[_i].rc) {
		ck_assert_ptr_null(strstr(e.msg, "pw@")); /* never user info */
		return;
	}
	ck_assert_str_eq(ep.scheme, endpoints[_i].scheme);
	ck_assert_str_eq(ep.host, endpoints[_i].host);
	ck_assert_str_eq(ep.path, endpoints[_i].path);
}
END_TEST

START_TEST(url_encode_and_query)
{
	struct buf b = BUF_INIT(BUF_NO_LIMIT);
	const struct objstore_param q[] = { { "uploadId", "a/b+c=" },
		                            { "partNumber", "3" },
		                            { "list-type", NULL } };
	static const char key[] = "dir/a b~_-.é*";

	ck_assert_int_eq(objstore_url_encode(&b, key, strlen(key), true), 0);
	ck_assert_str_eq(buf_cstr(&b), "dir/a%20b~_-.%C3%A9%2A");
	buf_clear(&b);
	ck_assert_int_eq(objstore_url_encode(&b, "a/b", 3, false), 0);
	ck_assert_str_eq(buf_cstr(&b), "a%2Fb");
	buf_clear(&b);
	ck_assert_int_eq(objstore_url_query(&b, q, 3), 0);
	ck_assert_str_eq(buf_cstr(&b), "?list-type=&partNumber=3&uploadId=a%2Fb%2Bc%3D");
	buf_clear(&b);
	ck_assert_int_eq(objstore_url_query(&b, q, 0), 0);
	ck_assert_str_eq(buf_cstr(&b), "");
	buf_release(&b);

	/* All or nothing at the limit. */
	struct buf small = BUF_INIT(5);

	ck_assert_int_eq(objstore_url_encode(&small, "ab", 2, false), 0);
	ck_assert_int_eq(objstore_url_encode(&small, "c d", 3, false), -EMSGSIZE);
	ck_assert_str_eq(buf_cstr(&small), "ab");
	buf_release(&small);
}
END_TEST

static const struct {
	const char *key;
	int rc;
} keys[] = {
	{ "backups/prod/cache/2024-01-02T03:04:05Z.rdb", 0 },
	{ "a", 0 },
	{ "a/b.c/..d", 0 },
	{ "", -EINVAL },
	{ "/leading", -EINVAL },
	{ "trailing/", -EINVAL },
	{ "a//b", -EINVAL },
	{ "a/./b", -EINVAL },
	{ "a/../b", -EINVAL },
	{ "..", -EINVAL },
	{ "tab\there", -EINVAL },
	{ "nl\n", -EINVAL },
};

START_TEST(url_keys)
{
	struct err e;

	err_clear(&e);
	ck_assert_int_eq(objstore_url_check_key(keys[_i].key, &e), keys[_i].rc);
}
END_TEST

START_TEST(url_key_too_long)
{
	char key[OBJSTORE_KEY_MAX + 2];

	memset(key, 'k', sizeof(key));
	key[OBJSTORE_KEY_MAX] = '\0';
	ck_assert_int_eq(objstore_url_check_key(key, NULL), 0);
	key[OBJSTORE_KEY_MAX] = 'k';
	key[OBJSTORE_KEY_MAX + 1] = '\0';
	ck_assert_int_eq(objstore_url_check_key(key, NULL), -EINVAL);
}
END_TEST

/* ---- block ids, parts ------------------------------------------------------------ */

START_TEST(block_ids)
{
	char a[25], b[25], c[25];

	objstore_block_id(1, a);
	objstore_block_id(2, b);
	objstore_block_id(50000, c);
	ck_assert_str_eq(a, "b2Jqc3RvcmUtMDAwMDAx"); /* base64("objstore-000001") */
	ck_assert_str_eq(b, "b2Jqc3RvcmUtMDAwMDAy");
	ck_assert_uint_eq(strlen(a), 20);
	ck_assert_uint_eq(strlen(c), strlen(a)); /* the same width for every block of a blob */
	ck_assert_str_ne(a, b);
}
END_TEST

static const struct {
	uint64_t size;
	size_t part;
	uint64_t parts;
} part_cases[] = {
	{ 0, 8u << 20, 1 },
	{ 1, 8u << 20, 1 },
	{ 8u << 20, 8u << 20, 1 },
	{ (8u << 20) + 1, 8u << 20, 2 },
	{ 40u << 20, 8u << 20, 5 },
	{ 40u << 20, 0, 5 }, /* 0: the default, 8 MiB */
	{ 80000ull << 20, 8u << 20, 10000 },
};

START_TEST(part_arithmetic)
{
	ck_assert_uint_eq(objstore_parts_for(part_cases[_i].size, part_cases[_i].part),
	                  part_cases[_i].parts);
}
END_TEST

START_TEST(part_limits)
{
	struct err e;

	ck_assert_uint_eq(objstore_max_object(0), 10000ull * (8u << 20));
	ck_assert_uint_eq(objstore_max_object(5u << 20), 10000ull * (5u << 20));
	ck_assert_int_eq(objstore_check_part_size(0, NULL), 0);
	ck_assert_int_eq(objstore_check_part_size(5u << 20, NULL), 0);
	ck_assert_int_eq(objstore_check_part_size(512u << 20, NULL), 0);
	err_clear(&e);
	ck_assert_int_eq(objstore_check_part_size((5u << 20) - 1, &e), -EINVAL);
	ck_assert_ptr_nonnull(strstr(e.msg, "part size"));
	ck_assert_int_eq(objstore_check_part_size((512u << 20) + 1, NULL), -EINVAL);
}
END_TEST

/* ---- the handle's configuration checks (no request is made) ---------------------- */

static const struct {
	struct objstore_config cfg;
	const char *msg;
} bad_configs[] = {
	{ { .provider = OBJSTORE_S3, .bucket = "" }, "bucket/container is empty" },
	{ { .provider = OBJSTORE_S3,
	    .bucket = "a/b",
	    .access_key_id = "k",
	    .secret_access_key = "s" },
	  "bucket/container a/b" },
	{ { .provider = OBJSTORE_S3, .bucket = "b" }, "AWS_ACCESS_KEY_ID" },
	{ { .provider = OBJSTORE_S3,
	    .bucket = "b",
	    .access_key_id = "k",
	    .secret_access_key = "s",
	    .endpoint = "s3.local:9000" },
	  "must start with http" },
	{ { .provider = OBJSTORE_S3,
	    .bucket = "b",
	    .access_key_id = "k",
	    .secret_access_key = "s",
	    .part_size = 1024 },
	  "part size" },
	{ { .provider = OBJSTORE_S3,
	    .bucket = "a.b",
	    .access_key_id = "k",
	    .secret_access_key = "s" },
	  "use path style" },
	{ { .provider = OBJSTORE_AZURE, .bucket = "c" }, "azure needs" },
	{ { .provider = OBJSTORE_AZURE, .bucket = "c", .account = "a", .account_key = "***" },
	  "AZURE_STORAGE_KEY is not base64" },
	{ { .provider = OBJSTORE_AZURE, .bucket = "c", .account_key = KEY64 },
	  "AZURE_STORAGE_ACCOUNT" },
	{ { .provider = OBJSTORE_AZURE, .bucket = "c", .connection_string = "AccountName=a" },
	  "needs AccountKey" },
};

START_TEST(config_rejects)
{
	struct objstore_err oe;

	ck_assert_ptr_null(objstore_new(&bad_configs[_i].cfg, &oe));
	ck_assert_int_eq(oe.err.code, -EINVAL);
	ck_assert_msg(strstr(oe.err.msg, bad_configs[_i].msg), "got \"%s\"", oe.err.msg);
	ck_assert(!oe.retryable);
}
END_TEST

START_TEST(config_accepts)
{
	struct objstore_config s3 = { .provider = OBJSTORE_S3,
		                      .bucket = "b",
		                      .access_key_id = "k",
		                      .secret_access_key = "s" };
	struct objstore_config az = { .provider = OBJSTORE_AZURE,
		                      .bucket = "c",
		                      .connection_string = "UseDevelopmentStorage=true" };
	struct objstore_config sas = { .provider = OBJSTORE_AZURE,
		                       .bucket = "c",
		                       .account = "acct",
		                       .sas_token = "?sv=1&sig=2" };
	struct objstore *os;

	ck_assert_ptr_nonnull(os = objstore_new(&s3, NULL));
	ck_assert_str_eq(objstore_provider_name(os), "s3");
	objstore_free(os);
	ck_assert_ptr_nonnull(os = objstore_new(&az, NULL));
	ck_assert_str_eq(objstore_provider_name(os), "azure");
	objstore_free(os);
	ck_assert_ptr_nonnull(os = objstore_new(&sas, NULL));
	objstore_free(os);
	objstore_free(NULL);
}
END_TEST

static Suite *objstore_parse_suite(void)
{
	Suite *s = suite_create("objstore_parse");
	TCase *tc = tcase_create("parse");

	tcase_add_loop_test(tc, connstr_parses, 0, ARRAY_LEN(connstr_good));
	tcase_add_loop_test(tc, connstr_rejects, 0, ARRAY_LEN(connstr_bad));
	tcase_add_test(tc, xml_s3_list);
	tcase_add_test(tc, xml_azure_list);
	tcase_add_test(tc, xml_empty_and_self_closing);
	tcase_add_loop_test(tc, xml_error_documents, 0, ARRAY_LEN(error_docs));
	tcase_add_loop_test(tc, xml_malformed, 0, ARRAY_LEN(xml_bad));
	tcase_add_test(tc, xml_truncated_everywhere);
	tcase_add_loop_test(tc, url_endpoint, 0, ARRAY_LEN(endpoints));
	tcase_add_test(tc, url_encode_and_query);
	tcase_add_loop_test(tc, url_keys, 0, ARRAY_LEN(keys));
	tcase_add_test(tc, url_key_too_long);
	tcase_add_test(tc, block_ids);
	tcase_add_loop_test(tc, part_arithmetic, 0, ARRAY_LEN(part_cases));
	tcase_add_test(tc, part_limits);
	tcase_add_loop_test(tc, config_rejects, 0, ARRAY_LEN(bad_configs));
	tcase_add_test(tc, config_accepts);
	suite_add_tcase(s, tc);
	return s;
}

UNIT_MAIN(objstore_parse_suite)
