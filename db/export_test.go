package db

// DecodeSmallNumeric is decodeSmallNumeric, for the tests of package db_test.
var DecodeSmallNumeric = decodeSmallNumeric
