/* Written for skillbox: the few settings libfyaml's sources read when they
 * are compiled directly, without its configure script. */
#define HAVE_QSORT_R	1
#define HAVE_DEVMODE	0
#define HAVE_LIBYAML	0
#define VERSION		"0.7.12"
#define PACKAGE_VERSION	"0.7.12"
