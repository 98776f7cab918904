// nohash.js: JavaScript with no "#!" line
console.log("js-ok", process.argv.slice(2).join(" "));
