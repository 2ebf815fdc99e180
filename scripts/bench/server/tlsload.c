/*
 * Load generator of the TLS benchmarks (scripts/bench/tls.ts): C and OpenSSL, so that the client
 * costs less per connection than the server it measures. wrk cannot be told whether to resume: it
 * keeps the session of its last connection (SSL_clear keeps it), so about half its "new"
 * connections resume and the other half make full handshakes.
 *
 *   tlsload <host> <port> <request file> <full|resume|keep-alive> <connections> <seconds>
 *
 * The request file is wrk.lua's ("<api key>\t<path>\t<JSON body>" per line); loop i of
 * <connections> sends requests i, i + connections, i + 2 × connections, … round-robin. Each loop
 * is a process (blocking sockets; forked after the file is read, so the requests are shared):
 *   full        a new TLS connection per request, never offering a session: a full handshake each
 *   resume      a new TLS connection per request, offering the newest session ticket the loop received
 *               (as the agent does: the server's cost of a resumption is the same whoever's ticket it opens)
 *   keep-alive  one TLS connection per loop, requests one after the other
 * Certificates are not verified (wrk does not either): the client's cost is the protocol's.
 * Latency runs from the start of the connection (keep-alive: of the request) to the end of the
 * answer. Prints one JSON line: requests, duration_us, errors, connections, resumed, p50_us,
 * p99_us, and client_cpu_s (user + system of every loop).
 *
 * Built by the benchmark: cc -O2 -o tlsload tlsload.c -lssl -lcrypto (Debian: libssl-dev).
 */
#include <arpa/inet.h>
#include <errno.h>
#include <netdb.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <openssl/err.h>
#include <openssl/ssl.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/time.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

/* Latency histogram: 10 µs buckets below 100 ms, 1 ms buckets from there to 10 s. */
#define FINE 10000
#define BUCKETS (FINE + 9900)

struct result {
  uint64_t requests, errors, connections, resumed;
  uint32_t histogram[BUCKETS];
};

static char **requests;
static size_t *lengths;
static size_t count;

static uint64_t now_us(void) {
  struct timespec t;
  clock_gettime(CLOCK_MONOTONIC, &t);
  return (uint64_t)t.tv_sec * 1000000u + (uint64_t)t.tv_nsec / 1000u;
}

static size_t bucket_of(uint64_t us) {
  if (us < FINE * 10) return us / 10;
  uint64_t ms = us / 1000;
  return ms >= 10000 ? BUCKETS - 1 : FINE + (ms - 100);
}

static uint64_t us_of(size_t bucket) { return bucket < FINE ? bucket * 10 : (bucket - FINE + 100) * 1000; }

static void load_requests(const char *file, int keep_alive) {
  FILE *in = fopen(file, "r");
  if (!in) {
    perror(file);
    exit(2);
  }
  size_t capacity = 1024;
  requests = malloc(capacity * sizeof *requests);
  lengths = malloc(capacity * sizeof *lengths);
  char *line = NULL;
  size_t size = 0;
  ssize_t read;
  while ((read = getline(&line, &size, in)) > 0) {
    if (line[read - 1] == '\n') line[--read] = 0;
    char *path = strchr(line, '\t');
    char *body = path ? strchr(path + 1, '\t') : NULL;
    if (!body) continue;
    *path++ = 0;
    *body++ = 0;
    if (count == capacity) {
      capacity *= 2;
      requests = realloc(requests, capacity * sizeof *requests);
      lengths = realloc(lengths, capacity * sizeof *lengths);
    }
    size_t body_length = strlen(body);
    size_t room = strlen(line) + strlen(path) + body_length + 256;
    requests[count] = malloc(room);
    int n = snprintf(requests[count], room,
                     "POST %s HTTP/1.1\r\nHost: localhost\r\nAuthorization: Bearer %s\r\nContent-Type: application/json\r\n"
                     "Content-Length: %zu\r\nConnection: %s\r\n\r\n%s",
                     path, line, body_length, keep_alive ? "keep-alive" : "close", body);
    lengths[count++] = (size_t)n;
  }
  free(line);
  fclose(in);
  if (count == 0) {
    fprintf(stderr, "%s holds no request\n", file);
    exit(2);
  }
}

static int open_socket(const struct sockaddr_in *address) {
  int fd = socket(AF_INET, SOCK_STREAM, 0);
  if (fd < 0) return -1;
  struct timeval timeout = {10, 0};
  setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &timeout, sizeof timeout);
  setsockopt(fd, SOL_SOCKET, SO_SNDTIMEO, &timeout, sizeof timeout);
  int one = 1;
  setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
  if (connect(fd, (const struct sockaddr *)address, sizeof *address) != 0) {
    close(fd);
    return -1;
  }
  return fd;
}

/* Sends one request and reads its answer (headers and Content-Length bytes); the status, or -1. */
static int exchange(SSL *ssl, const char *request, size_t length, int *closing) {
  if (SSL_write(ssl, request, (int)length) != (int)length) return -1;
  char buffer[16384];
  size_t have = 0;
  long header_end = -1, content_length = 0;
  for (;;) {
    int n = SSL_read(ssl, buffer + have, (int)(sizeof buffer - 1 - have));
    if (n <= 0) return -1;
    have += (size_t)n;
    buffer[have] = 0;
    if (header_end < 0) {
      char *end = strstr(buffer, "\r\n\r\n");
      if (!end) {
        if (have == sizeof buffer - 1) return -1;
        continue;
      }
      header_end = end - buffer + 4;
      *end = 0;
      for (char *p = buffer; *p; p++) *p = (char)(*p >= 'A' && *p <= 'Z' ? *p + 32 : *p);
      char *field = strstr(buffer, "\r\ncontent-length:");
      content_length = field ? strtol(field + 17, NULL, 10) : 0;
      *closing = strstr(buffer, "\r\nconnection: close") != NULL;
      int status = atoi(buffer + 9);
      *end = '\r';
      if ((long)have - header_end >= content_length) return status;
      /* Only the body's length matters from here: keep counting without keeping it. */
      long missing = content_length - ((long)have - header_end);
      while (missing > 0) {
        int m = SSL_read(ssl, buffer, (int)sizeof buffer);
        if (m <= 0) return -1;
        missing -= m;
      }
      return status;
    }
  }
}

static void run_loop(int loop, int loops, const struct sockaddr_in *address, int transport, uint64_t deadline,
                     struct result *result) {
  SSL_CTX *ctx = SSL_CTX_new(TLS_client_method());
  SSL_CTX_set_verify(ctx, SSL_VERIFY_NONE, NULL);
  SSL_CTX_set_session_cache_mode(ctx, SSL_SESS_CACHE_CLIENT | SSL_SESS_CACHE_NO_INTERNAL_STORE);
  SSL_SESSION *session = NULL;
  SSL *ssl = NULL;
  int fd = -1;
  size_t next = (size_t)loop;
  while (now_us() < deadline) {
    uint64_t began = now_us();
    const char *request = requests[next % count];
    size_t length = lengths[next % count];
    next += (size_t)loops;
    if (!ssl) {
      fd = open_socket(address);
      if (fd < 0) {
        result->errors++;
        usleep(10000); /* a refused connection returns at once: no busy loop */
        continue;
      }
      ssl = SSL_new(ctx);
      SSL_set_fd(ssl, fd);
      SSL_set_tlsext_host_name(ssl, "localhost");
      if (transport == 1 && session) {
        /* A copy: OpenSSL marks a TLS 1.3 session it resumed as used up, while the ticket stays
           valid (stateless) for as long as the server says; Node's client, like the agent, offers it
           again when the server sends no new one (bare Node does not renew on resumption). */
        SSL_SESSION *offered = SSL_SESSION_dup(session);
        SSL_set_session(ssl, offered);
        SSL_SESSION_free(offered);
      }
      if (SSL_connect(ssl) != 1) {
        ERR_clear_error();
        result->errors++;
        SSL_free(ssl);
        close(fd);
        ssl = NULL;
        continue;
      }
      result->connections++;
      if (SSL_session_reused(ssl)) result->resumed++;
    }
    int closing = 0;
    int status = exchange(ssl, request, length, &closing);
    if (status >= 200 && status < 300) {
      result->requests++;
      result->histogram[bucket_of(now_us() - began)]++;
    } else {
      ERR_clear_error();
      result->errors++;
      closing = 1;
    }
    if (transport != 2 || closing) {
      if (transport == 1) {
        /* The newest ticket the server sent, if it sent one. */
        SSL_SESSION *latest = SSL_get1_session(ssl);
        if (latest && SSL_SESSION_is_resumable(latest)) {
          if (session) SSL_SESSION_free(session);
          session = latest;
        } else if (latest) {
          SSL_SESSION_free(latest);
        }
      }
      SSL_shutdown(ssl);
      SSL_free(ssl);
      close(fd);
      ssl = NULL;
    }
  }
  if (ssl) {
    SSL_free(ssl);
    close(fd);
  }
}

int main(int argc, char **argv) {
  if (argc != 7) {
    fprintf(stderr, "usage: %s <host> <port> <request file> <full|resume|keep-alive> <connections> <seconds>\n", argv[0]);
    return 2;
  }
  int transport = strcmp(argv[4], "full") == 0 ? 0 : strcmp(argv[4], "resume") == 0 ? 1 : strcmp(argv[4], "keep-alive") == 0 ? 2 : -1;
  int loops = atoi(argv[5]);
  double seconds = atof(argv[6]);
  if (transport < 0 || loops < 1 || seconds <= 0) {
    fprintf(stderr, "bad transport, connections or seconds\n");
    return 2;
  }
  struct sockaddr_in address = {.sin_family = AF_INET, .sin_port = htons((uint16_t)atoi(argv[2]))};
  if (inet_pton(AF_INET, argv[1], &address.sin_addr) != 1) {
    fprintf(stderr, "host must be an IPv4 address\n");
    return 2;
  }
  signal(SIGPIPE, SIG_IGN);
  load_requests(argv[3], transport == 2);

  int start[2];
  if (pipe(start) != 0) return 2;
  int (*results)[2] = calloc((size_t)loops, sizeof *results);
  pid_t *children = calloc((size_t)loops, sizeof *children);
  for (int i = 0; i < loops; i++) {
    if (pipe(results[i]) != 0) return 2;
    children[i] = fork();
    if (children[i] < 0) return 2;
    if (children[i] == 0) {
      close(start[1]);
      char go;
      if (read(start[0], &go, 1) < 0) _exit(2);
      uint64_t deadline = now_us() + (uint64_t)(seconds * 1e6);
      struct result *result = calloc(1, sizeof *result);
      run_loop(i, loops, &address, transport, deadline, result);
      const char *p = (const char *)result;
      size_t left = sizeof *result;
      while (left > 0) {
        ssize_t n = write(results[i][1], p, left);
        if (n <= 0) _exit(2);
        p += n;
        left -= (size_t)n;
      }
      _exit(0);
    }
    close(results[i][1]);
  }
  close(start[0]);
  uint64_t began = now_us();
  close(start[1]); /* every loop starts now */

  struct result total = {0};
  struct result *one = malloc(sizeof *one);
  for (int i = 0; i < loops; i++) {
    char *p = (char *)one;
    size_t left = sizeof *one;
    while (left > 0) {
      ssize_t n = read(results[i][0], p, left);
      if (n <= 0) break;
      p += n;
      left -= (size_t)n;
    }
    if (left > 0) {
      fprintf(stderr, "loop %d ended without a result\n", i);
      return 1;
    }
    total.requests += one->requests;
    total.errors += one->errors;
    total.connections += one->connections;
    total.resumed += one->resumed;
    for (size_t b = 0; b < BUCKETS; b++) total.histogram[b] += one->histogram[b];
  }
  for (int i = 0; i < loops; i++) waitpid(children[i], NULL, 0);
  uint64_t duration = now_us() - began;
  struct rusage usage;
  getrusage(RUSAGE_CHILDREN, &usage);
  double cpu = (double)usage.ru_utime.tv_sec + usage.ru_utime.tv_usec / 1e6 + (double)usage.ru_stime.tv_sec + usage.ru_stime.tv_usec / 1e6;

  uint64_t p50 = 0, p99 = 0, seen = 0;
  for (size_t b = 0; b < BUCKETS; b++) {
    seen += total.histogram[b];
    if (!p50 && seen * 2 >= total.requests && total.requests) p50 = us_of(b);
    if (!p99 && seen * 100 >= total.requests * 99 && total.requests) p99 = us_of(b);
  }
  printf("{\"requests\":%llu,\"duration_us\":%llu,\"errors\":%llu,\"connections\":%llu,\"resumed\":%llu,\"p50_us\":%llu,\"p99_us\":%llu,"
         "\"client_cpu_s\":%.3f}\n",
         (unsigned long long)total.requests, (unsigned long long)duration, (unsigned long long)total.errors,
         (unsigned long long)total.connections, (unsigned long long)total.resumed, (unsigned long long)p50, (unsigned long long)p99, cpu);
  return 0;
}
