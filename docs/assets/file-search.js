// Search from file://, without network and without browser flags (site_hook.py). The theme searches
// in a Web Worker started from assets/javascripts/workers/search.*.min.js, and a page opened from the
// file system may not start a worker from a file. It may start one from a blob: URL of its own
// making: assets/search-worker-source.js (loaded just before this) holds the worker's code as a
// string. Over http(s) nothing changes.
(function () {
  if (location.protocol !== "file:" || typeof __gpulab_search_worker !== "string") return;
  var PageWorker = window.Worker;
  var searchWorker = /\/assets\/javascripts\/workers\/search\.[0-9a-f]+\.min\.js$/;
  function FileSearchWorker(url, options) {
    if (!searchWorker.test(new URL(String(url), location.href).pathname)) return new PageWorker(url, options);
    var code = new Blob([__gpulab_search_worker], { type: "text/javascript" });
    return new PageWorker(URL.createObjectURL(code), options);
  }
  FileSearchWorker.prototype = PageWorker.prototype;
  window.Worker = FileSearchWorker;
})();
